// SIGINT and SIGTERM stop a run cleanly, with its reports written: see StopSignals.
#pragma once

#include <csignal>
#include <string>

namespace mps_audit {

// While it lives, SIGINT and SIGTERM set stop_signal() (the pool sees it and stops its workers), and SIGPIPE is
// ignored, so that writing to a worker that just died is an error to handle, not the end of the run. The previous
// dispositions come back afterwards.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_pipe_{};
};

// The signal that asked the run to stop, or 0.
int stop_signal();

// "SIGINT", "SIGTERM", "SIGSEGV" (the signals that stop a run, and those that end a crashed process), else
// "signal 7".
std::string signal_name(int signal);

}  // namespace mps_audit
