// Runs one operator in one dtype on the CPU (the reference) and on the target, in this process, and decides the
// verdict: the worst sample decides. Crashes and hangs are the caller's business (run/worker_main.cc runs this in a
// worker process).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include "probe/compare.h"
#include "probe/probe_target.h"
#include "probe/spec.h"
#include "results/result.h"

namespace mps_audit {

class Recordings;

// Where a probe is, for a worker's parent to tell a crash or a hang of the CPU reference from one on the target, and
// from one while a turn's outputs are copied back (Note [Worker protocol] in run/worker_protocol.cc).
enum class ProbeStage { kReference, kTarget, kTurn };
using ProbeMark = std::function<void(size_t probe, ProbeStage stage)>;

struct ProbeRequest {
  std::string op, dtype;
};
// Probes `requests` (the dtypes of one operator, in order), in one turn on a target that has them
// (ProbeTarget::in_turns): each up to its outputs' copies back, one wait, then each one's comparison. The turn ends
// with a probe in which a fault was caught (Note [Caught faults]): the records are those of the probes run, in order.
// `mark(k, stage)` is called as probe k begins (kReference), before each of its runs on the target (kTarget), and,
// with more than one probe, before the wait (kTurn, k = 0) and before each probe's comparison.
// `recordings`: the recorded samples to replay (probe/recorded_samples.h), or none.
std::vector<ProbeResult> probe_ops(const ProbeTarget& target, const Spec& spec, const Recordings* recordings,
                                   const std::vector<ProbeRequest>& requests, const ProbeMark& mark = {});

// Forgets what the probes of this process learnt of each operator (the synthesis that worked, the first dtype whose
// inputs the CPU took), as a new worker knows nothing; for tests.
void forget_operators();

// One probe, with the process's recorded samples (process_recordings(): set_recordings_choice() says which), for tests
// and benchmarks. `before_target` is called after the CPU reference, just before each run on the target.
ProbeResult probe_op(const ProbeTarget& target, const Spec& spec, const std::string& op, const std::string& dtype,
                     const std::function<void()>& before_target = {});

}  // namespace mps_audit
