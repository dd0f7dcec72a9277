// A model audit's trace of the target (probe/dispatch_trace.h) as the calls its reports list: per operator and phase,
// with the fallbacks inside each call, what they copied, the call that raised and the first call that differs.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "probe/compare.h"
#include "probe/dispatch_trace.h"
#include "results/model_results.h"

namespace mps_audit {

// The first call whose outputs differ from the CPU's same call.
struct CallMismatch {
  long event = -1;  // index in the target's trace, -1: none found
  Comparison comparison;
};

// Turns the target's trace into per-operator calls: the top-level operators (those the model, autograd or the
// optimizer called), each with the fallbacks inside it. `phase_ends[i]` is the phase that ended, with the event count
// then; events after the last phase are the audit's own (none are calls), unless no phase ended (all are forward).
// `failed_event` (-1: none) is an event of the call that raised `failure` (NotImplementedError or a dtype TypeError
// when `failure_unsupported`). Fallbacks come first, then the failed call, then the first mismatch, then by time.
std::vector<ModelOpCall> summarize_trace(const std::vector<TraceEvent>& events,
                                         const std::vector<std::pair<std::string, size_t>>& phase_ends,
                                         long failed_event, const std::string& failure, bool failure_unsupported,
                                         const CallMismatch& mismatch);

}  // namespace mps_audit
