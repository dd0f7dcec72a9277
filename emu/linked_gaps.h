// What emulating one release's MPS backend on another release's libtorch cannot show: see Note [Kernels the linked
// libtorch lacks] in linked_gaps.cc.
#pragma once

#include <map>
#include <string>

#include "registry/registry.h"
#include "results/result.h"

namespace mps_audit::emu {

// The records that say so begin with this; results/ names their skip reason `linked_libtorch`.
inline constexpr const char* kNotProbedPrefix = "not probed: ";

// Operator -> the sentence its records carry instead of a verdict ("not probed: libtorch 1.13.0 lacks the
// CompositeExplicitAutograd kernel that PyTorch 2.11.0 runs for aten::_foreach_sqrt on MPS"). `release`: the emulated
// release's registry for MPS; `linked`: the linked libtorch's live registry for MPS, read where no emulator is active
// (so it holds only composite kernels); both name their versions. Operators only one of them has are in it too: those
// of the release the linked libtorch lacks, and those of `linked_release` (the linked libtorch's own
// native_functions.yaml; where it is not at hand, every aten operator of the dispatcher) the release lacks. An
// operator the dispatcher has from elsewhere (torchvision's, quantized::, a hand-defined aten::get_gradients) is in
// no release's YAML and is no gap.
std::map<std::string, std::string> linked_kernel_gaps(const Registry& release, const Registry& linked,
                                                      const Registry* linked_release);

// A record whose operator ran one of `gaps` on the CPU (a composite kernel that calls it: _foreach_sqrt.out calls
// _foreach_sqrt) rests on the linked libtorch too: it becomes not probed, saying through which operator, and keeps
// what it gave in `observed`. Returns whether it did.
bool set_aside_linked_gap(ProbeResult& r, const std::map<std::string, std::string>& gaps);

}  // namespace mps_audit::emu
