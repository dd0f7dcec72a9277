// What a run or a model audit probes: a target, as one typed value. targets/targets.h makes it from the flags (and
// knows what each target needs on this machine); everything else takes it whole and asks it, never its name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <c10/core/Device.h>

namespace mps_audit {

enum class TargetKind { kMps, kMpsEmu, kCuda, kCpu, kMeta };

// What an emulated MPS target emulates (Note [The emulated Mac] in emu/emulated_mac.cc).
struct EmulatedMps {
  std::string release_dir;      // the emulated release's folder; empty: none found (a run refuses it)
  std::string release_version;  // "2.14.1", from its data; empty when the folder does not say
  std::string macos;            // "13.3" as asked; empty: the newest the release's data names
  std::string chip = "any";     // m1 ... m5, or any
};

struct Target {
  TargetKind kind = TargetKind::kCpu;
  EmulatedMps emu;  // kMpsEmu only

  // "mps-emu": the name --target takes, and results.json's environment.target.
  std::string_view name() const;
  // mps:0 for mps and mps-emu, cuda:0, meta, cpu.
  c10::Device device() const;
  bool emulated() const { return kind == TargetKind::kMpsEmu; }
  bool real_mps() const { return kind == TargetKind::kMps; }
  // MPS, real or emulated: what PyTorch's MPS expectations and the known bugs are about.
  bool mps() const { return kind == TargetKind::kMps || kind == TargetKind::kMpsEmu; }
  // The dispatch key whose registry its records cite, and the reports' name of its backend: MPS, CUDA, Meta, CPU.
  std::string_view backend() const;
};

// The names of the targets a run can probe, in the order `--target` lists them.
const std::vector<std::string>& target_names();
// The kind a target name stands for (as results files hold it); nullopt for anything else ("auto" included).
std::optional<TargetKind> target_kind_named(std::string_view name);
std::string_view to_string(TargetKind kind);

}  // namespace mps_audit
