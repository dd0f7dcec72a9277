// The pool of worker processes a run hands its probes to: starts them, hands out work by operator, times probes
// out, records a crash or a hang as one probe's, replaces workers that end. See the Notes in run/pool.cc; which worker
// gets which probes is run/scheduler.h's policy.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <c10/core/Device.h>

#include "results/results_file.h"
#include "run/plan.h"
#include "run/worker_process.h"

namespace mps_audit {

class PoolImpl;

class WorkerPool {
 public:
  // `expected`: each probe's expected seconds, by plan index (Note [Starts that pay] in run/scheduler.cc);
  // `timeout_s`: per probe.
  WorkerPool(WorkerLaunch launch, const std::vector<PlannedProbe>& plan, std::vector<double> expected,
             double timeout_s);
  // Kills and reaps the workers still going (Note [Workers at the end]).
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs the probes of `groups` (each the plan indices of one operator) on `jobs` workers; calls on_env with what a
  // worker reports when it is ready and on_result for each result, in arrival order (its op and dtype filled in).
  // Returns the signal that stopped it (stop_signal()), or 0.
  int run(std::vector<std::vector<size_t>> groups, size_t jobs,
          const std::function<void(const RunEnvironment&)>& on_env,
          const std::function<void(size_t, ProbeResult&)>& on_result);

 private:
  std::unique_ptr<PoolImpl> impl_;
};

// How many of `jobs` workers a run starts at once on `device`; the others start once one of them is ready (Note [Half
// the workers first] in run/pool.cc).
size_t workers_started_first(const c10::Device& device, size_t jobs);

}  // namespace mps_audit
