// A run's results: the environment block it starts, what its workers add to it, and the records in plan order once
// the pool is done.
#pragma once

#include "results/results_file.h"
#include "run/journal.h"
#include "run/plan.h"
#include "run/request.h"

namespace mps_audit {

// The run's own fields of the environment block (target, device, emulator, spec, samples, fallback, expectations);
// a resumed journal's device, emulator and libtorch. The host block is the first worker's (take_worker_environment),
// or this process's once the workers are done when none started (Note [Forked workers] in run/worker_process.cc).
RunEnvironment run_environment(const RunRequest& request, const RunPlan& plan, const RunJournal& journal);

// What a worker reports when it is ready: its device, emulator and libtorch, and the host block.
void take_worker_environment(RunEnvironment& env, const RunEnvironment& worker);

// The results: `env` (with this process's host block when `host_described` is false), every record the journal holds
// in plan order, the run block, and on MPS which release first had a native kernel of each operator. Writes the
// probe figures for the next run (`order.costs_path`).
Results finish_results(RunEnvironment env, bool host_described, const RunRequest& request, const RunPlan& plan,
                       RunJournal& journal, WorkOrder& order, int stopped_by);

}  // namespace mps_audit
