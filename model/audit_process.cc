// The process a model audit runs in, and the parent that watches it: see audit_process.h.
//
// Note [Model audit in a child process]
// A model that kills the process on the target, by a crash or a hang, must still give a report, so `mps-audit model`
// runs the audit in a child process and watches it, as `run` watches its workers (Note [Worker protocol]), through the
// same layer (Note [Child processes] in run/child_process.cc). The parent checks the options (bad ones: one line, exit
// 2) and starts the child: on Linux a fork, which has libtorch loaded and has touched no device, nor run an operator
// (Note [Forked workers]); on macOS, whose system frameworks do not survive a fork, and with MPS_AUDIT_WORKERS=exec,
// the same command line executed again, told by MPS_AUDIT_MODEL_PROGRESS where to report. The child runs the whole
// audit (it loads the model, runs the CPU reference and then the target, writes the reports, prints the summary) and
// its exit status is the command's. It keeps the parent told, in memory they share (AuditProgress), of its stage
// (loading, cpu, target, reporting), the phase (setup, forward, loss, backward, optimizer), the operator call it is in,
// with its tensor inputs (a global RecordFunction callback marks each call as it starts and ends: an operator at the
// top level or directly inside one of autograd's node events, as the trace counts calls), and, as the target stage
// begins, the run's environment block. When the child dies from a signal or stays in one stage longer than --timeout
// (each stage has its own), the parent reads that memory. On the target, that is a finding: the parent writes the
// reports (exit 0), naming the call (or, outside any call, its phase) and the signal or the timeout, with a record of
// verdict crash or timeout. Before the target (loading, the CPU reference) it is the model's own fault, and while
// reporting a tool error: one line, exit 2. Reports are written atomically, each by the one process that ends the
// audit, so none is ever half-written. The emulator reads PYTORCH_ENABLE_MPS_FALLBACK when it is activated, which the
// child does after setting the variable as --fallback says. Real MPS reads it when libtorch loads, before main(): on
// macOS the parent executes the child with the variable set as --fallback says.
#include "model/audit_process.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/text.h"
#include "probe/dtypes.h"

namespace mps_audit {
namespace {

constexpr const char* kProgressVariable = "MPS_AUDIT_MODEL_PROGRESS";  // "FD:PARENT_PID" in an executed child
constexpr int kProgressFd = 3;                                         // the executed child's descriptor of it

}  // namespace

// Where the audit process is, in memory it shares with the parent. Fields are written under `version` (odd while one
// is being written), so that the parent can tell a field cut short by the child's death.
struct AuditProgress {
  std::atomic<uint32_t> version{0};
  std::atomic<uint32_t> stage_number{0};  // counts stage changes: each restarts the parent's timer
  char stage[16] = "loading";             // loading, cpu, target, reporting
  char phase[16] = "";                    // setup, forward, loss, backward, optimizer
  char call[256] = "";                    // the operator call in progress ("aten::relu"), "" outside any
  char dtype[32] = "";                    // of the call's first tensor input
  char inputs[512] = "";                  // the call's tensor inputs, "float32[4, 3, 32, 32], float32[8, 3, 3, 3]"
  uint32_t environment_size = 0;          // the run's environment block (JSON), once the target stage begins
  char environment[65536] = "";
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "a word shared between processes must be lock-free");

namespace {

template <size_t N>
void put(char (&field)[N], std::string_view text) {
  const size_t n = std::min(text.size(), N - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

template <size_t N>
std::string get(const char (&field)[N]) {
  return std::string(field, ::strnlen(field, N));
}

}  // namespace

template <typename F>
void ProgressWriter::write(const F& f) {
  std::lock_guard<std::mutex> lock(mutex_);
  shared_->version.fetch_add(1);
  f();
  shared_->version.fetch_add(1);
}

void ProgressWriter::stage(const char* stage) {
  write([&] { put(shared_->stage, stage); });
  shared_->stage_number.fetch_add(1);
}

void ProgressWriter::phase(const char* phase) {
  write([&] { put(shared_->phase, phase); });
}

void ProgressWriter::call(const std::string& op, const std::string& dtype, const std::string& inputs) {
  write([&] {
    put(shared_->call, op);
    put(shared_->dtype, dtype);
    put(shared_->inputs, inputs);
  });
}

void ProgressWriter::environment(const std::string& json) {
  write([&] {
    shared_->environment_size = json.size() < sizeof shared_->environment ? static_cast<uint32_t>(json.size()) : 0;
    put(shared_->environment, shared_->environment_size ? json : "");
  });
}

namespace {

// What the parent reads once the audit process is gone.
LostAudit snapshot(const AuditProgress& p) {
  LostAudit s;
  s.stage = get(p.stage);
  s.phase = get(p.phase);
  // Odd: the process died while writing, so the call may be cut short; none is named rather than a wrong one.
  if (p.version.load() % 2 == 0) {
    s.call = get(p.call);
    s.dtype = get(p.dtype);
    s.inputs = get(p.inputs);
  }
  if (p.environment_size > 0) s.environment = get(p.environment);
  return s;
}

// The memory the audit process and the parent share (see Note [Child processes] in run/child_process.cc).
class SharedProgress {
 public:
  SharedProgress()
      : block_(sizeof(AuditProgress), "mps-audit-model", "the audit's state file"),
        progress_(new (block_.data()) AuditProgress()) {}
  int fd() const { return block_.fd(); }
  AuditProgress& progress() { return *progress_; }

 private:
  SharedBlock block_;
  AuditProgress* progress_;
};

// The call each thread is in, for the progress (see Note [Model audit in a child process]): per open operator event
// of the thread, what it is.
enum class Opened : uint8_t { kWrapper, kCall, kInner };
thread_local std::vector<Opened> t_opened;
ProgressWriter* g_progress = nullptr;

std::string full_name(const at::RecordFunction& fn) {
  if (auto op = fn.operator_name()) return op->overload_name.empty() ? op->name : op->name + "." + op->overload_name;
  return fn.name();
}

// The dtype of a call's first tensor input ("none" without one) and its tensor inputs, as the trace describes them.
std::pair<std::string, std::string> describe_inputs(const at::RecordFunction& fn) {
  std::vector<at::Tensor> tensors;
  for (const c10::IValue& v : fn.inputs()) {
    if (v.isTensor() && v.toTensor().defined()) tensors.push_back(v.toTensor());
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) tensors.push_back(t);
    }
  }
  std::vector<std::string> described;
  for (const auto& t : tensors) {
    described.push_back(fmt::format("{}[{}]", dtype_name(t.scalar_type()), fmt::join(t.sizes(), ", ")));
  }
  return {tensors.empty() ? "none" : dtype_name(tensors.front().scalar_type()),
          fmt::format("{}", fmt::join(described, ", "))};
}

std::unique_ptr<at::ObserverContext> on_call_start(const at::RecordFunction& fn) {
  const std::string name = full_name(fn);
  Opened opened = Opened::kInner;
  if (name.rfind("autograd::", 0) == 0) {
    opened = Opened::kWrapper;
  } else if (t_opened.empty() || t_opened.back() == Opened::kWrapper) {
    opened = Opened::kCall;
    if (g_progress) {
      const auto [dtype, inputs] = describe_inputs(fn);
      g_progress->call(name, dtype, inputs);
    }
  }
  t_opened.push_back(opened);
  return nullptr;
}

void on_call_end(const at::RecordFunction&, at::ObserverContext*) {
  if (t_opened.empty()) return;
  const bool call = t_opened.back() == Opened::kCall;
  t_opened.pop_back();
  if (call && g_progress) g_progress->call("", "", "");
}

// Marks the calls in the progress while it lives.
class CallMarker {
 public:
  explicit CallMarker(ProgressWriter& progress) {
    g_progress = &progress;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_call_start, &on_call_end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  }
  ~CallMarker() {
    at::removeCallback(handle_);
    g_progress = nullptr;
  }
  CallMarker(const CallMarker&) = delete;
  CallMarker& operator=(const CallMarker&) = delete;

 private:
  uint64_t handle_ = 0;
};

// The audit process: runs the audit, its calls marked in the progress; returns its exit status, as the command's.
int run_audit_process(std::ostream& out, std::ostream& err, AuditProgress& shared, const AuditBody& audit) {
  ProgressWriter progress(&shared);
  int status = kExitBadInput;
  try {
    CallMarker marking(progress);
    status = audit(progress);
  } catch (const UserError& e) {
    err << format_diagnostic(e) << "\n";
  } catch (const std::exception& e) {
    err << "error: " << first_line(e.what(), /*trim_trailing_spaces=*/true) << "\n";
  }
  out.flush();
  err.flush();
  return status;
}

// Starts the audit process (see Note [Model audit in a child process]); returns its pid.
pid_t start_audit_process(const AuditProcessOptions& o, std::ostream& out, std::ostream& err, SharedProgress& shared,
                          const AuditBody& audit) {
  out.flush();
  err.flush();
  std::fflush(nullptr);
  ChildSetup setup;
  pid_t pid = -1;
  if (children_forked()) {
    setup.die_with_parent = true;
    const int rc = fork_child(
        setup, [&] { return run_audit_process(out, err, shared.progress(), audit); }, pid);
    if (rc != 0) throw UserError(fmt::format("cannot start the audit process: {}", std::strerror(rc)));
    return pid;
  }
  setup.descriptors = {{kProgressFd, shared.fd(), ""}};
  setup.unset = {kProgressVariable};
  setup.variables = {{kProgressVariable, fmt::format("{}:{}", kProgressFd, ::getpid())}};
  setup.variables.insert(setup.variables.end(), o.variables.begin(), o.variables.end());
  const int rc = spawn_child(o.self, o.command_line, setup, pid);
  if (rc != 0) throw UserError(fmt::format("cannot start the audit process ({}): {}", o.self, std::strerror(rc)));
  return pid;
}

// Waits for the audit process; kills it once it stays in one stage longer than the timeout.
ChildEnd wait_for_audit(pid_t pid, const AuditProgress& progress, double timeout_s) {
  uint32_t stage = progress.stage_number.load();
  try {
    return wait_for_child(pid, timeout_s, [&] {
      const uint32_t s = progress.stage_number.load();
      const bool moved = s != stage;
      stage = s;
      return moved;
    });
  } catch (const std::system_error& e) {
    throw UserError(fmt::format("lost the audit process: {}", std::strerror(e.code().value())));
  }
}

}  // namespace

int run_in_audit_process(const AuditProcessOptions& o, std::ostream& out, std::ostream& err, const AuditBody& audit,
                         const LostAuditReport& report_lost) {
  if (const char* given = std::getenv(kProgressVariable)) {  // the executed audit process
    int fd = -1;
    long parent = 0;
    if (std::sscanf(given, "%d:%ld", &fd, &parent) != 2) {
      throw UserError(fmt::format("${}={}: expected FD:PID", kProgressVariable, given));
    }
    ::unsetenv(kProgressVariable);
    if (!die_with_parent(static_cast<pid_t>(parent))) std::_Exit(kExitBadInput);
    void* shared = map_shared_block(fd, sizeof(AuditProgress));
    if (!shared) throw UserError(fmt::format("cannot map the audit's state: {}", std::strerror(errno)));
    const int status = run_audit_process(out, err, *static_cast<AuditProgress*>(shared), audit);
    std::fflush(nullptr);
    std::_Exit(status);
  }
  SharedProgress shared;
  const pid_t pid = start_audit_process(o, out, err, shared, audit);
  const ChildEnd end = wait_for_audit(pid, shared.progress(), o.timeout_s);
  if (end.exited()) return end.exit_code;
  LostAudit lost = snapshot(shared.progress());
  lost.end = end;
  return report_lost(lost);
}

}  // namespace mps_audit
