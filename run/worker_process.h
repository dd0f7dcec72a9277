// A worker's process: how a run starts one (forked, or spawned from the binary) with its pipes, its lifeline and its
// shared word on the descriptors the worker protocol names (run/worker_protocol.h), and the environment it gets.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/child_process.h"

#include "run/worker_main.h"

namespace mps_audit {

// What a worker is started with: what it runs with (a forked worker takes it whole, with the run's spec parsed; a
// spawned one gets it on its command line), and how its process is set up.
struct WorkerLaunch {
  WorkerOptions worker;         // its target, spec and samples; the descriptors are set as it starts
  std::string self;             // this executable, for a spawned worker
  std::string fallback = "on";  // --fallback: PYTORCH_ENABLE_MPS_FALLBACK for the worker
  std::string log_path;         // its standard error is appended there
};

// Whether workers are forked from the run (Linux), rather than spawned from the binary (Note [Forked workers]).
bool forked_workers();

// Starts a worker whose descriptors 0, 1, kLifelineFd and kStateFd are `in`, `out`, `lifeline` and `state`, in its
// own process group with default signal dispositions (Note [Forked workers]); returns 0 and sets `pid`, or an errno.
int start_worker_process(const WorkerLaunch& how, int in, int out, int lifeline, int state, pid_t& pid);

// The variables a run sets in its workers' environment, name and value, given the target, --fallback and the run's
// own environment (a null-terminated array, as `environ`). See Note [Worker environment] in run/worker_process.cc.
std::vector<std::pair<std::string, std::string>> worker_variables(const Target& target, const std::string& fallback,
                                                                  const char* const* environment);

// A descriptor moved above the ones a worker gets by number (0 to 4), so that dup2 onto those never meets itself
// (which would leave close-on-exec set); close-on-exec. Returns the new descriptor (the old one is closed).
int above_worker_fds(int fd);

// One 64-bit word of memory shared with a worker process (a SharedBlock), which the worker maps by the descriptor it
// inherits (Note [Worker protocol] in run/worker_protocol.cc).
class SharedWord {
 public:
  SharedWord();
  int fd() const { return block_.fd(); }
  std::atomic<int64_t>& word() { return *static_cast<std::atomic<int64_t>*>(block_.data()); }

 private:
  SharedBlock block_;
};

}  // namespace mps_audit
