// Starting a worker's process: see worker_process.h.
#include "run/worker_process.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#include <unistd.h>

#include "common/diagnostics.h"
#include "run/worker_main.h"
#include "run/worker_protocol.h"

extern char** environ;

namespace mps_audit {
namespace {

// Whether `entry` ("NAME=value", as in `environ`) sets the variable `name`.
bool sets_variable(const char* entry, const std::string& name) {
  return std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=';
}

// What a worker's process is started with, forked or spawned: descriptors 0 and 1 first (the pipes' own numbers are
// 3 or more, and may be 3 or 4), its standard error appended to its log, its own process group with default signal
// dispositions (the parent ignores SIGPIPE and catches SIGINT and SIGTERM) and no blocked signals, and the variables
// of Note [Worker environment].
ChildSetup worker_setup(const WorkerLaunch& how, int in, int out, int lifeline, int state) {
  ChildSetup setup;
  setup.descriptors = {
      {0, in, ""}, {1, out, ""}, {2, -1, how.log_path}, {kLifelineFd, lifeline, ""}, {kStateFd, state, ""}};
  setup.own_group = true;
  setup.close_others = true;  // a forked worker: the other workers' pipes, the journal, the folder lock
  setup.variables = worker_variables(how.worker.target, how.fallback, environ);
  return setup;
}

// Forks a worker; returns 0 or an errno.
int fork_worker(const WorkerLaunch& how, int in, int out, int lifeline, int state, pid_t& worker) {
  WorkerOptions o = how.worker;
  o.parent = ::getpid();
  o.lifeline = kLifelineFd;
  o.state = kStateFd;
  return fork_child(
      worker_setup(how, in, out, lifeline, state),
      [&] {
        try {
          return run_worker(o, std::cout);
        } catch (const UserError& e) {
          std::cerr << format_diagnostic(e) << "\n";
        } catch (const std::exception& e) {
          std::cerr << "error: " << e.what() << "\n";
        }
        return static_cast<int>(kExitBadInput);
      },
      worker);
}

// Spawns `mps-audit __worker`; returns 0 or an errno.
int spawn_worker(const WorkerLaunch& how, int in, int out, int lifeline, int state, pid_t& worker) {
  const WorkerOptions& o = how.worker;
  std::vector<std::string> words = {how.self,      "__worker",
                                    "--target",    std::string(o.target.name()),
                                    "--spec",      o.spec,
                                    "--parent",    std::to_string(::getpid()),
                                    "--emu-macos", std::to_string(o.emu_macos)};
  if (!o.target.emu.release_dir.empty()) {
    words.push_back("--emu-release");
    words.push_back(o.target.emu.release_dir);
  }
  words.push_back("--samples");
  words.push_back(o.samples);
  words.push_back("--lifeline");
  words.push_back(std::to_string(kLifelineFd));
  words.push_back("--state");
  words.push_back(std::to_string(kStateFd));
  return spawn_child(how.self, words, worker_setup(how, in, out, lifeline, state), worker);
}

}  // namespace

// Note [Forked workers]
// On Linux a worker is a fork of the run, which has loaded libtorch and its CUDA libraries already: half a second
// of a core less per worker on the GPU machine, and a run whose probes crash starts one per crash. It also has the
// run's spec, parsed, and its recorded samples, loaded, and takes both from its options (WorkerOptions::run_spec,
// run_recordings), so it reads neither again. The run has not touched a device (CUDA cannot be used in a child
// forked after it was set up: the host block of the results, which asks CUDA how many devices it has, is a worker's,
// or filled in after the workers are done when none started), has no thread of its own running when it forks (Note
// [Reading in parallel] in run/plan.cc joins its readers first), and flushes its output before it forks. The child
// takes the worker's descriptors, closes every other one (the other workers' pipes, the journal, the folder lock),
// restores default signal dispositions and leaves the run's process group, as a spawned worker does, and runs
// run_worker() as `mps-audit __worker` would. Elsewhere (macOS, whose system frameworks do not survive a fork), and
// with MPS_AUDIT_WORKERS=exec, workers are spawned from the binary with posix_spawn.
bool forked_workers() {
  static const bool forked = children_forked();
  return forked;
}

int above_worker_fds(int fd) {
  return move_descriptor_above(fd, 10);
}

SharedWord::SharedWord() : block_(sizeof(int64_t), "mps-audit-worker", "a worker's state file") {
  word().store(-1);
}

int start_worker_process(const WorkerLaunch& how, int in, int out, int lifeline, int state, pid_t& pid) {
  return forked_workers() ? fork_worker(how, in, out, lifeline, state, pid)
                          : spawn_worker(how, in, out, lifeline, state, pid);
}

// Note [Worker environment]
// What a run sets in its workers' environment, beyond its own: PYTORCH_ENABLE_MPS_FALLBACK as --fallback says, and
// on CUDA, CUDA_DEVICE_MAX_CONNECTIONS=1 unless the run's environment sets it. A CUDA context sets up that many
// hardware work queues (8 by default), and the driver sets contexts up one after another, each the slower for its
// queues. A worker runs its probes one after another on one stream, so more queues gain it nothing, and every record
// is the same with one. (Measured: docs/benchmarks.md, "2026-11-24 (evening)".)
std::vector<std::pair<std::string, std::string>> worker_variables(const Target& target, const std::string& fallback,
                                                                  const char* const* environment) {
  std::vector<std::pair<std::string, std::string>> set = {
      {"PYTORCH_ENABLE_MPS_FALLBACK", fallback == "on" ? "1" : "0"}};
  if (target.kind == TargetKind::kCuda) {
    const std::string name = "CUDA_DEVICE_MAX_CONNECTIONS";
    bool given = false;
    for (const char* const* e = environment; e && *e; ++e) given = given || sets_variable(*e, name);
    if (!given) set.emplace_back(name, "1");
  }
  return set;
}

}  // namespace mps_audit
