// `mps-audit run`: see audit.h.
#include "run/audit.h"

#include <optional>

#include <fmt/format.h>
#include <unistd.h>

#include "common/output_file.h"
#include "common/paths.h"
#include "common/torch_compat.h"
#include "emu/mps_emulator.h"
#include "run/folder_lock.h"
#include "run/journal.h"
#include "run/plan.h"
#include "run/pool.h"
#include "run/progress.h"
#include "run/run_results.h"
#include "run/stop_signals.h"
#include "run/worker_process.h"

namespace mps_audit {
namespace {

// What a run holds until its reports are written: the folder's lock, its plan, and its workers, reaped when it goes
// (Note [Workers at the end] in run/pool.cc), whose pool refers to the plan. The pool goes first.
struct Held {
  Held(const std::string& dir, RunPlan made) : lock(dir), plan(std::move(made)) {}
  FolderLock lock;
  const RunPlan plan;
  std::optional<WorkerPool> pool;
};

// Starts (or, resumed, continues) workers.log, where the workers' standard error goes; returns its path.
std::string start_workers_log(const RunRequest& request, const RunPlan& plan, bool resuming) {
  const std::string path = join_path(request.out_dir, "workers.log");
  const std::string header =
      fmt::format("standard error of the workers of a run on {}{}\n", plan.where, resuming ? " (resumed)" : "");
  write_file_atomically(path, resuming && path_exists(path) ? read_file(path) + header : header);
  return path;
}

WorkerLaunch worker_launch(const RunRequest& request, const RunPlan& plan, const std::string& log_path) {
  WorkerLaunch launch;
  launch.worker.target = request.target;
  launch.worker.emu_macos = plan.expecting.version;
  launch.worker.spec = request.spec;
  launch.worker.samples = plan.recordings ? plan.recordings->summary().path : "none";
  launch.worker.run_spec = &plan.spec;
  launch.worker.run_recordings = plan.recordings;
  launch.self = request.self;
  launch.fallback = request.fallback;
  launch.log_path = log_path;
  return launch;
}

// The run's first lines: how auto chose the target, what a resumed run found, and what runs where.
void say_what_runs(const RunRequest& request, const RunPlan& plan, const RunJournal& journal, const WorkOrder& order,
                   std::ostream& err) {
  err << request.target_choice;
  const std::string slice = request.shard.count
                                ? fmt::format(" (shard {} of the plan's {})", request.shard.to_string(), plan.whole)
                                : std::string();
  if (request.resume && !journal.resuming) {
    err << fmt::format("--resume: nothing recorded in {} yet: a new run\n", request.out_dir);
  }
  if (journal.resuming) {
    err << fmt::format("resuming the run in {}: {} of {} probes{} recorded{}\n", request.out_dir, journal.finished,
                       plan.probes.size(), slice,
                       journal.torn ? " (the journal's last line was cut short: that probe runs again)" : "");
  }
  // An emulated release says which libtorch runs it in the run's first line.
  err << fmt::format("probing {} op x dtype pairs{} on {}{} with {} worker{}\n", order.probes,
                     journal.resuming ? "" : slice, plan.where,
                     request.target.emulated() ? fmt::format(" on libtorch {}", compat::kTorchVersion) : "", order.jobs,
                     order.jobs == 1 ? "" : "s");
}

}  // namespace

AuditedRun audit_run(const RunRequest& request, const Results* baseline, std::ostream& err) {
  RunPlan made = make_run_plan(request, err);
  // From here on the folder is ours: nothing above wrote anything. A SIGINT or SIGTERM from now on stops the run
  // with its reports written (the pool sees it before handing out anything).
  std::optional<StopSignals> signals(std::in_place);
  make_directories(request.out_dir);
  auto held = std::make_shared<Held>(request.out_dir, std::move(made));
  const RunPlan& plan = held->plan;
  RunJournal journal = open_journal(request, plan, err);
  const std::string log_path = start_workers_log(request, plan, journal.resuming);
  RunEnvironment env = run_environment(request, plan, journal);
  WorkOrder order = order_work(request, plan, journal.done, baseline);
  say_what_runs(request, plan, journal, order, err);

  Progress progress(err, order.probes, request.progress && order.probes > 0, isatty(STDERR_FILENO), plan.where);
  size_t ran = 0;
  bool host_described = false;
  std::optional<WorkerPool>& pool = held->pool;  // reaped after the reports (Note [Workers at the end])
  // Forked workers find the emulator's kernels registered (Note [Kernels registered before the fork] in
  // emu/mps_emulator.cc): after the plan, which reads this process's dispatcher without them.
  if (request.target.emulated() && forked_workers() && order.probes > 0) {
    emu::prepare_mps_emulator(
        {request.target.emu.release_dir, plan.macos_major(), request.fallback == "on", plan.expecting.version});
  }
  pool.emplace(worker_launch(request, plan, log_path), plan.probes, std::move(order.expected), request.timeout_s);
  int stopped_by = pool->run(
      std::move(order.groups), order.jobs,
      [&](const RunEnvironment& worker) {
        take_worker_environment(env, worker);
        host_described = true;
        journal.add_environment(env);
      },
      [&](size_t i, ProbeResult& r) {
        plan.annotate(r, request.target);
        progress.update(++ran, r);
        journal.add(i, std::move(r));
      });
  if (!stopped_by && stop_signal()) stopped_by = stop_signal();              // it came after the last result
  if (stopped_by && journal.finished == plan.probes.size()) stopped_by = 0;  // too late to lose anything
  signals.reset();  // a signal while the reports are written ends the process; each report is whole or absent

  Results results = finish_results(std::move(env), host_described, request, plan, journal, order, stopped_by);
  const emu::RunExpectations* expecting = &held->plan.expecting;
  return {std::move(results), stopped_by, std::move(held), expecting};
}

}  // namespace mps_audit
