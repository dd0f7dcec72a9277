// A run's results: see run_results.h.
#include "run/run_results.h"

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/torch_compat.h"
#include "emu/timeline.h"
#include "run/stop_signals.h"
#include "targets/host.h"

namespace mps_audit {
namespace {

// Copies the host block (the fields describe_host() fills in, but the fallback variable: the run sets what its
// workers ran with) from `from` to `env`.
void take_host_block(RunEnvironment& env, const RunEnvironment& from) {
  env.os = from.os;
  env.macos = from.macos;
  env.mps_built = from.mps_built;
  env.mps_available = from.mps_available;
  env.mps_why_not = from.mps_why_not;
  env.cuda_built = from.cuda_built;
  env.cuda_available = from.cuda_available;
  env.cuda_devices = from.cuda_devices;
  env.targets = from.targets;
}

}  // namespace

RunEnvironment run_environment(const RunRequest& request, const RunPlan& plan, const RunJournal& journal) {
  RunEnvironment env;
  env.target = std::string(request.target.name());
  env.requested = request.requested_target;
  env.fallback_mode = request.fallback;
  env.spec = request.spec;
  env.spec_hash = plan.spec_hash;
  if (plan.recordings) {
    const auto& summary = plan.recordings->summary();
    env.samples = summary.path;
    env.samples_hash = summary.hash;
    env.samples_calls = summary.kept;
    for (const auto& [why, n] : summary.dropped) env.samples_dropped += n;
  }
  // Asking CUDA how many devices it has sets up its driver in this process, and workers forked from it could not use
  // CUDA then (Note [Forked workers]): the host block waits for the first worker's.
  env.torch_version = compat::kTorchVersion;
  // What the probes ran with (the workers' environment, set from --fallback), not the parent's own variable.
  env.fallback_variable = request.fallback == "on" ? "1" : "0";
  env.device = request.target.device().str();
  if (request.target.emulated()) env.emulator = plan.emulator();
  plan.expecting.describe(env);
  if (journal.environment) {
    env.device = journal.environment->device;
    env.emulator = journal.environment->emulator;
    env.torch_version = journal.environment->torch_version;
  }
  return env;
}

void take_worker_environment(RunEnvironment& env, const RunEnvironment& worker) {
  env.device = worker.device;
  env.emulator = worker.emulator;
  env.torch_version = worker.torch_version;
  take_host_block(env, worker);
}

Results finish_results(RunEnvironment env, bool host_described, const RunRequest& request, const RunPlan& plan,
                       RunJournal& journal, WorkOrder& order, int stopped_by) {
  if (!host_described) {
    RunEnvironment host;
    describe_host(host);
    take_host_block(env, host);
  }
  Results doc;
  doc.environment = std::move(env);
  doc.run.planned = plan.probes.size();
  doc.run.finished = journal.finished;
  doc.run.shard = request.shard.to_string();
  if (stopped_by) doc.run.interrupted = signal_name(stopped_by);
  doc.records.reserve(journal.finished);
  for (size_t i = 0; i < plan.probes.size(); ++i) {
    if (journal.done[i]) doc.records.push_back(std::move(*journal.results[i]));
  }
  MPS_AUDIT_ASSERT(stopped_by || doc.records.size() == plan.probes.size(), "a planned probe without a record");
  // Which release first had a native MPS kernel of each operator, when the HTML report asks for it (Note [Native
  // since, when asked] in emu/timeline.cc). Read here, once the workers are done: no thread of the run may be running
  // when it forks a worker (Note [Forked workers] in run/worker_process.cc).
  if (request.native_since) {
    std::map<std::string, const Registry*> loaded;
    if (request.target.emulated() && !plan.release_version.empty()) loaded[plan.release_version] = &plan.statuses;
    emu::add_native_since(doc, loaded);
  }
  write_file_atomically(order.costs_path, render_probe_costs(std::move(order.costs), doc.records));
  return doc;
}

}  // namespace mps_audit
