// What a --target value means here: see targets.h.
#include "targets/targets.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/diagnostics.h"
#include "common/flags.h"
#include "common/text.h"
#include "common/torch_info.h"
#include "emu/emulated_mac.h"
#include "emu/mps_emulator.h"
#include "registry/release_data.h"
#include "targets/host.h"

namespace mps_audit {
namespace {

// The kind --target names, checked against the names and auto; nullopt for auto.
std::optional<TargetKind> checked_kind(const std::string& requested) {
  std::vector<std::string> names = {"auto"};
  names.insert(names.end(), target_names().begin(), target_names().end());
  check_choice("--target", requested, names);
  return target_kind_named(requested);  // nullopt: auto
}

}  // namespace

// The emulation flags, checked; for an emulated target, the release they name (or the linked libtorch's).
Target make_target_of_kind(TargetKind kind, const TargetRequest& request) {
  Target t;
  t.kind = kind;
  const std::string folder = request.emu_release.empty() ? "" : release_folder(request.emu_release);
  if (!request.emu_macos.empty()) emu::parse_emu_macos("--emu-macos", request.emu_macos);
  const std::string chip = request.emu_chip.empty() ? "any" : request.emu_chip;
  emu::parse_chip("--emu-chip", chip);
  if (!t.emulated()) return t;
  t.emu.release_dir = folder.empty() ? emu::default_release_dir() : folder;
  t.emu.macos = request.emu_macos;
  t.emu.chip = chip;
  if (!t.emu.release_dir.empty()) t.emu.release_version = resolve_release(t.emu.release_dir, "MPS").version;
  return t;
}

void check_target_request(const TargetRequest& request) {
  checked_kind(request.target);
  make_target_of_kind(TargetKind::kCpu, request);
}

Target make_target(const TargetRequest& request, std::string& why) {
  const std::optional<TargetKind> named = checked_kind(request.target);
  const TorchInfo torch = linked_torch_info();
  const TargetKind kind = named            ? *named
                          : torch.has_mps  ? TargetKind::kMps
                          : torch.has_cuda ? TargetKind::kCuda
                                           : TargetKind::kMpsEmu;
  if (!named) {
    why = fmt::format("target: auto picked {}{}\n", to_string(kind),
                      kind == TargetKind::kMpsEmu ? " (this libtorch has neither MPS nor CUDA: MPS is emulated)" : "");
  }
  if (kind == TargetKind::kMps && !torch.has_mps) {
    throw UserError(
        "--target mps: this libtorch has no MPS backend (that needs macOS on Apple silicon); "
        "--target mps-emu emulates it");
  }
  if (kind == TargetKind::kCuda && !torch.has_cuda) {
    throw UserError("--target cuda: this libtorch was built without CUDA");
  }
  return make_target_of_kind(kind, request);
}

Target make_model_target(const TargetRequest& request, const RunEnvironment& host) {
  if (request.target == "auto") {
    return make_target_of_kind(host.mps_available    ? TargetKind::kMps
                               : host.cuda_available ? TargetKind::kCuda
                                                     : TargetKind::kMpsEmu,
                               request);
  }
  std::string why;
  const Target target = make_target(request, why);
  if (target.kind == TargetKind::kMeta) {
    bad_flag("--target", "meta",
             "auto, mps, mps-emu, cuda or cpu (a model audit compares values; meta tensors hold none)");
  }
  std::vector<std::string> here;
  for (const auto& t : host.targets) {
    if (t.name != to_string(TargetKind::kMeta)) here.push_back(t.name);
  }
  if (std::find(here.begin(), here.end(), target.name()) == here.end()) {
    throw UserError(fmt::format("--target {} does not work here ({}); targets here: {}", target.name(),
                                target.real_mps() ? host.mps_why_not : "see `mps-audit env`", fmt::join(here, ", ")));
  }
  return target;
}

Target worker_target(const std::string& name, const std::string& release_dir) {
  const std::optional<TargetKind> kind = target_kind_named(name);
  if (!kind) throw UserError(fmt::format("__worker --target: no target '{}'", name));
  Target t{*kind, {}};
  if (t.emulated()) t.emu.release_dir = release_dir;
  return t;
}

int macos_major_version() {
  return std::atoi(macos_version().c_str());
}

}  // namespace mps_audit
