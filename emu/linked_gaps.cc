// What emulating one release on another release's libtorch cannot show.
//
// Note [Kernels the linked libtorch lacks]
// The emulator registers an MPS kernel for each operator the emulated release implements for MPS (native, always-CPU
// or stub: Note [MPS emulation]); it computes with the linked libtorch's CPU kernels, which any release has for an
// operator it has. Everything else an MPS tensor meets is the linked libtorch's own: its CompositeExplicitAutograd and
// CompositeImplicitAutograd kernels, and for the rest MPS's backend fallback. Where the emulated release and the
// linked libtorch disagree on those, a record would describe the linked library, not the release:
//  - the release runs a composite kernel the linked libtorch lacks: emulated 2.11.0 on libtorch 1.13.1 sends
//    _foreach_sqrt to the CPU (1.13.1 has only a CPU kernel) and _foreach_add_ through the fallback's copies, where a
//    Mac with 2.11.0 runs CompositeExplicitAutograd's slow path on MPS;
//  - the linked libtorch has a composite kernel the release lacks: a Mac would reach the fallback. Where that kernel
//    is CompositeExplicitAutograd's, the emulator registers MPS's fallback for the operator itself (emulated 1.13.1 on
//    libtorch 2.14 sends _foreach_sqrt to the CPU, as a Mac with 1.13.1 does), so it is probed; a
//    CompositeImplicitAutograd kernel decomposes above the MPS key, where the emulator cannot stand in;
//  - one of them lacks the operator (2.14 has no Dimname overloads; 1.13.1 lacks operators added since).
// Such records are not probed. They are skips that say which (skip reason `linked_libtorch`), so they are counted
// apart and a baseline diff lists them as no longer probed, never as regressions. A composite kernel can call such an
// operator (_foreach_sqrt.out calls _foreach_sqrt): the probe's dispatcher trace shows it among the operators that
// fell back, and that record is set aside the same way, keeping what it gave in `observed`. Composite explicit on one
// side and implicit on the other is no gap: either runs other operators, each of which meets the release's kernels.
// When the release is the linked one, the registries agree (tools/oracle checks it) and nothing is left out.
#include "emu/linked_gaps.h"

#include <fmt/format.h>

namespace mps_audit::emu {
namespace {

bool composite(OpStatus s) {
  return s == OpStatus::kCompositeExplicit || s == OpStatus::kCompositeImplicit;
}

// Where the emulator's kernel decides (it registers one), the linked library's composite kernels never run.
bool emulated(OpStatus s) {
  return s == OpStatus::kNative || s == OpStatus::kCpuFallback;
}

const char* key_name(OpStatus s) {
  return s == OpStatus::kCompositeExplicit ? "CompositeExplicitAutograd" : "CompositeImplicitAutograd";
}

std::string version_or(const Registry& r, const char* otherwise) {
  return r.torch_version.empty() ? otherwise : r.torch_version;
}

}  // namespace

std::map<std::string, std::string> linked_kernel_gaps(const Registry& release, const Registry& linked,
                                                      const Registry* linked_release) {
  const std::string r = "PyTorch " + version_or(release, "(the emulated release)");
  const std::string l = "libtorch " + version_or(linked, "(linked)");
  std::map<std::string, std::string> gaps;
  for (const auto& op : release.ops) {
    const RegistryEntry* here = linked.find(op.name);
    if (!here) {
      const bool named = op.schema.find("Dimname") != std::string::npos;
      gaps[op.name] =
          named ? fmt::format("{}named tensors do not exist in {}, which has no {}", kNotProbedPrefix, l, op.name)
                : fmt::format("{}{} lacks {}, which {} has", kNotProbedPrefix, l, op.name, r);
    } else if (emulated(op.status)) {
      continue;
    } else if (composite(op.status) && !composite(here->status)) {
      gaps[op.name] = fmt::format("{}{} lacks the {} kernel that {} runs for {} on MPS", kNotProbedPrefix, l,
                                  key_name(op.status), r, op.name);
    } else if (!composite(op.status) && here->status == OpStatus::kCompositeImplicit) {
      gaps[op.name] = fmt::format("{}{} runs a {} kernel for {} that {} lacks (a Mac reaches MPS's fallback)",
                                  kNotProbedPrefix, l, key_name(here->status), op.name, r);
    }
  }
  for (const auto& op : linked.ops) {
    const bool from_yaml = linked_release ? linked_release->find(op.name) != nullptr : op.name.rfind("aten::", 0) == 0;
    if (from_yaml && !release.find(op.name)) {
      gaps[op.name] = fmt::format("{}{} has no {} ({} has)", kNotProbedPrefix, r, op.name, l);
    }
  }
  return gaps;
}

bool set_aside_linked_gap(ProbeResult& r, const std::map<std::string, std::string>& gaps) {
  for (const auto& leaf : r.fallback_ops) {
    const auto it = gaps.find(leaf);
    if (it == gaps.end() || leaf == r.op) continue;
    r.observed = std::string(to_string(r.verdict));
    r.verdict = Verdict::kSkip;
    r.message = fmt::format("{}it ran {} on the CPU, and {}", kNotProbedPrefix, leaf,
                            it->second.substr(std::string(kNotProbedPrefix).size()));
    return true;
  }
  return false;
}

}  // namespace mps_audit::emu
