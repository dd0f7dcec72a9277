// The process a model audit runs in, and the parent that watches it (Note [Model audit in a child process] in
// audit_process.cc): a model that crashes or hangs the target process still gives reports that say so.
#pragma once

#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "run/child_process.h"

namespace mps_audit {

struct AuditProgress;  // the memory the audit process and its parent share

// The audit process's side of that memory: where the audit is, for the parent to say should the process die or hang.
// Every thread that runs an operator may write, one at a time.
class ProgressWriter {
 public:
  explicit ProgressWriter(AuditProgress* shared) : shared_(shared) {}
  // loading, cpu, target, reporting; each restarts the parent's timer (--timeout is per stage).
  void stage(const char* stage);
  // setup, forward, loss, backward, optimizer
  void phase(const char* phase);
  // The operator call in progress, its first tensor input's dtype and its tensor inputs; "" outside any call.
  void call(const std::string& op, const std::string& dtype, const std::string& inputs);
  // The run's environment block (JSON), as the target stage begins.
  void environment(const std::string& json);

 private:
  template <typename F>
  void write(const F& f);
  AuditProgress* shared_;
  std::mutex mutex_;
};

// The whole audit, in the audit process, with `progress` kept told: the command's exit status. May throw UserError.
using AuditBody = std::function<int(ProgressWriter& progress)>;

// Where the audit process was when it crashed or hung, as it last told its parent, and how it ended.
struct LostAudit {
  std::string stage;                // loading, cpu, target, reporting
  std::string phase;                // setup, forward, loss, backward, optimizer
  std::string call, dtype, inputs;  // the operator call it was in; "" outside any (or when cut short by its death)
  std::string environment;          // the run's environment block (JSON), once the target stage began
  ChildEnd end;                     // killed by a signal, or timed out
};

// Says what became of an audit whose process crashed or hung, in the parent: the reports of that finding, or a
// UserError. Returns the command's exit status.
using LostAuditReport = std::function<int(const LostAudit& lost)>;

// How the audit process starts and is watched.
struct AuditProcessOptions {
  std::string self;                                            // this executable, for an executed audit process
  std::vector<std::string> command_line;                       // argv, likewise
  std::vector<std::pair<std::string, std::string>> variables;  // set in an executed audit process's environment
  double timeout_s = 600;                                      // how long it may stay in one stage
};

// Runs `audit` in a child process (forked, or with MPS_AUDIT_WORKERS=exec and on macOS this executable run again
// with `options.command_line`, which then runs `audit` itself) and watches it; the exit status is the child's, or
// when it crashed or hung, `report_lost`'s.
int run_in_audit_process(const AuditProcessOptions& options, std::ostream& out, std::ostream& err,
                         const AuditBody& audit, const LostAuditReport& report_lost);

}  // namespace mps_audit
