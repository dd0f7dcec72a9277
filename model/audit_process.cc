// The process a model audit runs in, and the parent that watches it: see audit_process.h.
//
// Note [Model audit in a child process]
// A model that kills the process on the target, by a crash or a hang, must still give a report, so `mps-audit model`
// runs the audit in a child process and watches it, as `run` watches its workers (Note [Worker protocol]). The parent
// checks the options (bad ones: one line, exit 2) and starts the child: on Linux a fork, which has libtorch loaded and
// has touched no device, nor run an operator (Note [Forked workers]); on macOS, whose system frameworks do not
// survive a fork, and with MPS_AUDIT_WORKERS=exec, the same command line executed again, told by
// MPS_AUDIT_MODEL_PROGRESS where to report. The child runs the whole audit (it loads the model, runs the CPU
// reference and then the target, writes the reports, prints the summary) and its exit status is the command's. It
// keeps the parent told, in memory they share (AuditProgress), of its stage (loading, cpu, target, reporting), the
// phase (setup, forward, loss, backward, optimizer), the operator call it is in, with its tensor inputs (a global
// RecordFunction callback marks each call as it starts and ends: an operator at the top level or directly inside one
// of autograd's node events, as the trace counts calls), and, as the target stage begins, the run's environment
// block. When the child dies from a signal or stays in one stage longer than --timeout (each stage has its own), the
// parent reads that memory. On the target, that is a finding: the parent writes the reports (exit 0), naming the call
// (or, outside any call, its phase) and the signal or the timeout, with a record of verdict crash or timeout. Before
// the target (loading, the CPU reference) it is the model's own fault, and while reporting a tool error: one line,
// exit 2. Reports are written atomically, each by the one process that ends the audit, so none is ever half-written.
// The emulator reads PYTORCH_ENABLE_MPS_FALLBACK when it is activated, which the child does after setting the
// variable as --fallback says. Real MPS reads it when libtorch loads, before main(): on macOS the parent executes the
// child with the variable set as --fallback says.
#include "model/audit_process.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <ATen/record_function.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "common/diagnostics.h"
#include "probe/dtypes.h"
#include "run/stop_signals.h"

extern char** environ;

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
struct ProgressSnapshot {
  std::string stage, phase, call, dtype, inputs, environment;
};

ProgressSnapshot snapshot(const AuditProgress& p) {
  ProgressSnapshot s;
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

// The memory the audit process and the parent share: a file, unlinked at once, so that an executed child can map it
// too (by its descriptor); close-on-exec above the descriptors a child gets by number.
class SharedProgress {
 public:
  SharedProgress() {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/mps-audit-model-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) throw UserError(fmt::format("cannot create the audit's state file: {}", std::strerror(errno)), {path});
    ::unlink(path.c_str());
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    if (fd_ < 0 || ::ftruncate(fd_, sizeof(AuditProgress)) != 0) {
      throw UserError(fmt::format("cannot create the audit's state file: {}", std::strerror(errno)), {path});
    }
    void* p = ::mmap(nullptr, sizeof(AuditProgress), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) throw UserError(fmt::format("cannot map the audit's state file: {}", std::strerror(errno)));
    progress_ = new (p) AuditProgress();
  }
  ~SharedProgress() {
    ::munmap(progress_, sizeof(AuditProgress));
    ::close(fd_);
  }
  SharedProgress(const SharedProgress&) = delete;
  SharedProgress& operator=(const SharedProgress&) = delete;
  int fd() const { return fd_; }
  AuditProgress& progress() { return *progress_; }

 private:
  int fd_ = -1;
  AuditProgress* progress_ = nullptr;
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

// An error's first line, for the one line a failed audit prints.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// The audit process: runs the audit, its calls marked in the progress, and ends with its exit status, as the command
// would.
[[noreturn]] void run_audit_process(std::ostream& out, std::ostream& err, AuditProgress& shared,
                                    const AuditBody& audit) {
  ProgressWriter progress(&shared);
  int status = kExitBadInput;
  try {
    CallMarker marking(progress);
    status = audit(progress);
  } catch (const UserError& e) {
    err << format_diagnostic(e) << "\n";
  } catch (const std::exception& e) {
    err << "error: " << first_line(e.what()) << "\n";
  }
  out.flush();
  err.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

// Dies with the parent, however it dies (Linux; elsewhere the audit runs to its end).
void end_with_parent(pid_t parent) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) std::_Exit(kExitBadInput);
#else
  (void)parent;
#endif
}

bool executed_child() {
#ifdef __linux__
  const char* how = std::getenv("MPS_AUDIT_WORKERS");
  return how && std::string(how) == "exec";
#else
  return true;
#endif
}

// Starts the audit process (see Note [Model audit in a child process]); returns its pid.
pid_t start_audit_process(const ModelOptions& o, std::ostream& out, std::ostream& err, SharedProgress& shared,
                          const AuditBody& audit) {
  out.flush();
  err.flush();
  std::fflush(nullptr);
  if (!executed_child()) {
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) throw UserError(fmt::format("cannot start the audit process: {}", std::strerror(errno)));
    if (pid == 0) {
      end_with_parent(parent);
      run_audit_process(out, err, shared.progress(), audit);
    }
    return pid;
  }
  std::vector<std::string> env_strings;
  const std::string fallback = "PYTORCH_ENABLE_MPS_FALLBACK";
  const std::optional<TargetKind> named = target_kind_named(o.target.target);  // none: auto, maybe a Mac's MPS
  const bool real_mps = !named || *named == TargetKind::kMps;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name != kProgressVariable && !(real_mps && name == fallback)) env_strings.push_back(entry);
  }
  env_strings.push_back(fmt::format("{}={}:{}", kProgressVariable, kProgressFd, ::getpid()));
  if (real_mps) env_strings.push_back(fallback + "=" + (o.fallback == "on" ? "1" : "0"));
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = o.command_line;
  for (auto& s : words) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, shared.fd(), kProgressFd);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, o.self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw UserError(fmt::format("cannot start the audit process ({}): {}", o.self, std::strerror(rc)));
  return pid;
}

struct AuditEnd {
  bool timed_out = false;
  int signal = 0;     // the signal that ended it
  int exit_code = 0;  // its exit status, when it exited
};

// Waits for the audit process; kills it once it stays in one stage longer than the timeout.
AuditEnd wait_for_audit(pid_t pid, const AuditProgress& progress, double timeout_s) {
  const auto limit = std::chrono::duration<double>(timeout_s);
  auto stage_began = std::chrono::steady_clock::now();
  uint32_t stage = progress.stage_number.load();
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      AuditEnd end;
      if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
      if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
      return end;
    }
    if (r < 0 && errno != EINTR) throw UserError(fmt::format("lost the audit process: {}", std::strerror(errno)));
    const auto now = std::chrono::steady_clock::now();
    if (const uint32_t s = progress.stage_number.load(); s != stage) {
      stage = s;
      stage_began = now;
    }
    if (now - stage_began > limit) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      AuditEnd end;
      end.timed_out = true;
      return end;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The end of an audit whose process died or hung (see Note [Model audit in a child process]): on the target, the
// reports of that finding; elsewhere, one line.
int report_lost_audit(const ModelOptions& o, const ProgressSnapshot& p, const AuditEnd& end,
                      const LostAuditReport& report_lost) {
  const std::string what = end.timed_out ? fmt::format("did not finish within {:g} s (--timeout)", o.timeout_s)
                                         : fmt::format("crashed the process: {}", signal_name(end.signal));
  const std::string call = p.call.empty() ? "" : fmt::format("{} ({})", p.call, p.phase);
  if (p.stage == "loading") throw UserError(fmt::format("{}: loading the model {}", o.model, what));
  if (p.stage == "cpu") {
    throw UserError(fmt::format("{}: on the CPU, {} {}", o.model, call.empty() ? "the model" : call, what));
  }
  if (p.stage != "target") {
    throw UserError(fmt::format("{}: the audit {} after the target pass, comparing the results and writing the reports",
                                o.model, what));
  }
  ModelAudit audit;
  if (!p.environment.empty()) audit.environment = run_environment_from_json(nlohmann::json::parse(p.environment));
  audit.failed_phase = p.phase;
  audit.target_ended = end.timed_out ? "timeout" : "crash";
  audit.target_error = fmt::format(
      "{} {}", call.empty() ? fmt::format("the {} phase, outside any operator call,", p.phase) : call, what);
  if (!p.call.empty()) {
    ModelOpCall c;
    c.op = p.call;
    c.phase = p.phase;
    c.dtype = p.dtype.empty() ? "none" : p.dtype;
    c.calls = 1;
    c.status = end.timed_out ? "timeout" : "crashed";
    if (!p.inputs.empty()) c.input_signatures.push_back(p.inputs);
    c.message = what;
    audit.ops.push_back(std::move(c));
  }
  return report_lost(audit);
}

}  // namespace

int run_in_audit_process(const ModelOptions& o, std::ostream& out, std::ostream& err, const AuditBody& audit,
                         const LostAuditReport& report_lost) {
  if (const char* given = std::getenv(kProgressVariable)) {  // the executed audit process
    int fd = -1;
    long parent = 0;
    if (std::sscanf(given, "%d:%ld", &fd, &parent) != 2) {
      throw UserError(fmt::format("${}={}: expected FD:PID", kProgressVariable, given));
    }
    ::unsetenv(kProgressVariable);
    end_with_parent(static_cast<pid_t>(parent));
    void* shared = ::mmap(nullptr, sizeof(AuditProgress), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (shared == MAP_FAILED) throw UserError(fmt::format("cannot map the audit's state: {}", std::strerror(errno)));
    run_audit_process(out, err, *static_cast<AuditProgress*>(shared), audit);
  }
  SharedProgress shared;
  const pid_t pid = start_audit_process(o, out, err, shared, audit);
  const AuditEnd end = wait_for_audit(pid, shared.progress(), o.timeout_s);
  if (!end.timed_out && end.signal == 0) return end.exit_code;
  return report_lost_audit(o, snapshot(shared.progress()), end, report_lost);
}

}  // namespace mps_audit
