// Known MPS bugs' own calls (data/mps_known_bugs.yaml's `repro`), probed as condition samples of their operators:
// Note [Known bugs' own calls] in repros.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>

#include "emu/known_bugs.h"
#include "probe/condition_samples.h"
#include "probe/spec.h"
#include "results/result.h"

namespace mps_audit {

// Adds the ledger's repros to `spec` (Spec::repros), those of operators in `known_ops` (the linked libtorch's; a
// repro of an operator it lacks is left out, as a release's operators are). A repro whose arguments are not of the
// spec's form is a UserError at its place in the ledger.
void add_repros(Spec& spec, const emu::KnownBugs& bugs, const std::vector<std::string>& known_ops);

// The repros of the ledger the shipped data holds (emu::load_shipped_known_bugs()) added to `spec`; none when no data
// home has a ledger.
void add_shipped_repros(Spec& spec, const std::vector<std::string>& known_ops);

// A repro whose tensors and results hold more elements than this together is not run: its shapes are checked on the
// meta device only (Note [Known bugs' own calls] in repros.cc).
inline constexpr int64_t kReproElementsLimit = int64_t{1} << 20;

// The repros of `op_name` (an overload) for `dtype`, as condition samples (named "repro:<id>"), those small enough to
// run; and, in `large`, the outcomes of the others: a skip that says why (too large, or shapes the meta device
// refuses), with the traits of its arguments made on the meta device.
std::vector<ConditionSample> repro_samples(const c10::OperatorHandle& op, const std::string& op_name,
                                           c10::ScalarType dtype, const std::string& dtype_label, const Spec& spec,
                                           std::vector<ConditionOutcome>& large);

}  // namespace mps_audit
