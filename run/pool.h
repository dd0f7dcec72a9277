// The pool of worker processes a run hands its probes to: starts them, hands out work by operator, times probes
// out, records a crash or a hang as one probe's, replaces workers that end. See the Notes in run/pool.cc.
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
  // `expected`: each probe's expected seconds, by plan index (Note [Starts that pay]); `timeout_s`: per probe.
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

// How many workers to start now, at most `room`, once starts have been seen to take `seconds_per_start` each: those
// for which `pending_seconds` of work not handed out, shared among the `able` workers that can take it and those
// started, is more than a start takes, and any that keep two able to take work (Note [Starts that pay] in
// run/pool.cc).
size_t starts_that_pay(double pending_seconds, size_t able, double seconds_per_start, size_t room);

// Which of an overload's probes, sent to a worker together with these figures (expected seconds), join the turn of
// the probe before them (Note [Probes in one turn] in probe/probe_op.cc): all but the first, except a probe expected
// to take long and the probe after it (Note [Slow probes alone] in run/pool.cc).
std::vector<bool> joins_turn(const std::vector<double>& expected);

}  // namespace mps_audit
