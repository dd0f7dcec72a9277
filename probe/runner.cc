// The run: plan, worker processes, journal, reports; resuming, interruption, the lock on the output folder, shards.
//
// Note [Worker protocol]
// The parent starts N workers (`mps-audit __worker --parent PID`), each with a pipe on its standard input and one
// on its standard output, and hands out probes: it writes "<i>\t<op>\t<dtype>\n" (i: the probe's index in the plan)
// to a worker's input, an overload's probes at a time and the next overload ahead (Note [Probes sent ahead]); a line
// that ends in "\t+" may join the turn of the line before it (Note [Probes in one turn] in probe/probe_op.cc). The
// worker runs them in the order they came, and answers each in that order. It writes on its output
//   env <json>            once, after it set up its target, its spec and recordings (RunEnvironment fields it
//                         knows); only then does it get work
//   result <i> <json>     after the probe (a ProbeResult)
//   again <i>             instead of a result, for a probe of a turn after which the device was unusable: the probe
//                         runs again, alone (Note [Turns that fail])
//   retire                before the results of a probe or turn that left the device unusable (see Note [Unusable
//                         device]): the worker exits after them, and others take the rest of its work
//   finish                before a result, when the worker caught a fault in the probe (Note [Caught faults]): it
//                         gets the rest of that operator and then no more work: its input is closed, and it exits
// Work is handed out by operator name: a worker gets every overload and dtype of one operator before the next (its
// caches stay warm: kernels compiled at first use, synthesis that worked), and idle workers take the next operator
// (the slowest first, as the last run in the output folder measured them, else the largest: Note [Slowest operators
// first] in probe/probe_costs.cc), so a slow operator holds up one worker only.
// A worker that dies while probe i is out gets i recorded as a crash; one whose probe outlives --timeout is killed,
// and i is recorded as a timeout. Either way the rest of its operator goes to other workers (Note [Probes that end
// their worker]), and a new worker starts (Note [Spare workers]). When that happens before the worker marked i as on
// the target, it was the CPU reference that crashed or hung: i is a skip (no reference), not the target's fault. The
// mark is a word of memory the parent shares with the worker (descriptor 4, `--state 4`, a file mapped by both): the
// worker stores the probe and its stage there (stage_word(): as it begins a probe, after each CPU reference, before
// the run on the target; in a turn also while it waits for the turn's outputs), and the parent reads it only when
// the worker died or timed out, or to see a turn go on (Note [Turns that fail]), so that telling them apart costs
// neither a system call nor a wake-up per sample.
// The timer of a probe starts when the worker begins it: when it is sent to an idle worker, or when the result of
// the probe before it arrives.
//
// Lifetime. A worker reads its work on the thread that runs its probes (no hand-over from another thread per probe),
// and exits when its standard input closes: the parent closes it when nothing is left to hand out, and on SIGINT or
// SIGTERM (then it also kills the worker). Whatever a worker is busy with, it exits as soon as its lifeline closes:
// descriptor 3 (`--lifeline 3`) is the read end of a pipe whose write end only the parent holds and never writes,
// and a thread of the worker's own waits on it; when the parent dies, however it dies, the kernel closes it. On
// Linux the worker also asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG; the parent spawns from its main
// thread, the one whose exit triggers it), and checks getppid() against --parent after asking, in case the parent died
// before. The parent's ends of the pipes are close-on-exec, so no worker holds another's input open. Workers run in
// their own process groups: a Ctrl-C at the terminal reaches the parent only, which then stops them itself. Every
// worker is reaped.
//
// Workers load libtorch with PYTORCH_ENABLE_MPS_FALLBACK set as --fallback says, because MPS reads it once, when it
// loads; see also Note [Worker environment].
//
// Note [Journal]
// journal.jsonl: the first line is the plan's identity, {"journal": 1, "plan": {...}} (spec path and content hash,
// target, emulated release and macOS rules, dtypes, ops filter, fallback mode, libtorch, shard, and a hash of the
// plan itself); then {"environment": {...}} once workers reported it (the probes' device, emulator and libtorch, and
// the host block, which a worker describes: see Note [Forked workers]), and one ProbeResult per line as results
// arrive, each line written with one write() and flushed. `run --resume` reads it back: a run whose identity differs
// is refused, the records fill their places in the plan (so reports list them in plan order whatever order they
// arrived in), a last line cut short is dropped (and cut from the file), and only the probes without a record run.
// The folder is locked (flock on .mps-audit.lock, close-on-exec) for the whole run, so two runs never write one
// journal.
#include "probe/runner.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/ones.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "common/data_home.h"
#include "common/diagnostics.h"
#include "common/environment.h"
#include "common/output_file.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/torch_compat.h"
#include "common/torch_info.h"
#include "emu/expected_verdicts.h"
#include "emu/mps_emulator.h"
#include "emu/timeline.h"
#include "probe/caught_faults.h"
#include "probe/dtypes.h"
#include "probe/probe_costs.h"
#include "probe/probe_op.h"
#include "probe/recorded_samples.h"
#include "probe/spec.h"
#include "registry/registry_command.h"
#include "registry/release_data.h"
#include "report/renderers.h"
#include "report/report_commands.h"
#include "results/results_file.h"

extern char** environ;

namespace mps_audit {
namespace {

constexpr int kJournalVersion = 1;
constexpr const char* kLockFile = ".mps-audit.lock";
constexpr int kLifelineFd = 3;  // the worker's end of its lifeline (Note [Worker protocol])
constexpr int kStateFd = 4;     // the worker's shared word: where it is (Note [Worker protocol])

// The shared word: 3 * i + the stage of probe i that the worker is in (ProbeStage); -1 before its first probe.
int64_t stage_word(long probe, ProbeStage stage) {
  return 3 * static_cast<int64_t>(probe) + static_cast<int64_t>(stage);
}
struct StageMark {
  long probe = -1;
  ProbeStage stage = ProbeStage::kReference;
};
StageMark read_mark(int64_t word) {
  if (word < 0) return {};
  return {static_cast<long>(word / 3), static_cast<ProbeStage>(word % 3)};
}

std::string registry_key(const std::string& target) {
  if (target == "mps" || target == "mps-emu") return "MPS";
  if (target == "cuda") return "CUDA";
  if (target == "meta") return "Meta";
  return "CPU";
}

// Every aten operator of the linked libtorch, with schema.
std::vector<std::string> aten_ops() {
  std::vector<std::string> names;
  auto& d = c10::Dispatcher::singleton();
  for (const auto& name : d.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    auto op = d.findOp(name);
    if (op && op->hasSchema()) names.push_back(c10::toString(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The target a request means; `why` says how `auto` chose, for the log.
std::string resolve_target(const std::string& requested, std::string& why) {
  std::vector<std::string> targets = {"auto"};
  targets.insert(targets.end(), probe_target_names().begin(), probe_target_names().end());
  if (std::find(targets.begin(), targets.end(), requested) == targets.end()) {
    throw UserError(fmt::format("unknown target '{}', expected one of {}{}", requested, fmt::join(targets, ", "),
                                did_you_mean(requested, targets)));
  }
  const TorchInfo torch = linked_torch_info();
  if (requested == "auto") {
    const std::string picked = torch.has_mps ? "mps" : torch.has_cuda ? "cuda" : "mps-emu";
    why = fmt::format("target: auto picked {}{}\n", picked,
                      picked == "mps-emu" ? " (this libtorch has neither MPS nor CUDA: MPS is emulated)" : "");
    return picked;
  }
  if (requested == "mps" && !torch.has_mps) {
    throw UserError(
        "--target mps: this libtorch has no MPS backend (that needs macOS on Apple silicon); "
        "--target mps-emu emulates it");
  }
  if (requested == "cuda" && !torch.has_cuda) throw UserError("--target cuda: this libtorch was built without CUDA");
  return requested;
}

c10::Device device_for(const std::string& target) {
  if (target == "mps" || target == "mps-emu") return c10::Device(c10::DeviceType::MPS, 0);
  if (target == "cuda") return c10::Device(c10::DeviceType::CUDA, 0);
  if (target == "meta") return c10::Device(c10::DeviceType::Meta);
  return c10::Device(c10::DeviceType::CPU);
}

struct Probe {
  std::string op, dtype;
};

// The running macOS's major version (a real MPS target's); 0 elsewhere.
int macos_major_version() {
  return std::atoi(macos_version().c_str());
}

// --- signals ----------------------------------------------------------------------------------------------------

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int signal) {
  g_stop_signal = signal;
}

// SIGINT and SIGTERM stop the run cleanly (Pool::run sees the flag); SIGPIPE is ignored, so that writing to a worker
// that just died is an error to handle, not the end of the run. The previous dispositions come back afterwards.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction stop {};
    stop.sa_handler = on_stop_signal;
    sigemptyset(&stop.sa_mask);
    stop.sa_flags = 0;  // no SA_RESTART: poll() returns at once
    sigaction(SIGINT, &stop, &old_int_);
    sigaction(SIGTERM, &stop, &old_term_);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_pipe_{};
};

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

// --- the lock on the output folder --------------------------------------------------------------------------------

// Holds an exclusive flock on DIR/.mps-audit.lock while it lives. The descriptor is close-on-exec, so workers do not
// inherit it (a worker outliving its parent would otherwise keep the folder locked).
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir) : path_(join_path(dir, kLockFile)) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UserError(fmt::format("cannot create the lock file: {}", std::strerror(errno)), {path_});
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      std::string holder(32, '\0');
      const ssize_t n = ::pread(fd_, holder.data(), holder.size(), 0);
      holder.resize(n > 0 ? static_cast<size_t>(n) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
      ::close(fd_);
      throw UserError(fmt::format("{} is in use by another run{}: wait for it to end, or use another --out", dir,
                                  holder.empty() ? "" : " (pid " + holder + ")"));
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// --- the journal --------------------------------------------------------------------------------------------------

// Appends whole lines, each with one write(), so that a kill leaves at most the last line cut short.
class JournalWriter {
 public:
  JournalWriter(const std::string& path, bool append, size_t keep_bytes) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? 0 : O_TRUNC), 0644);
    if (fd_ < 0) throw UserError(fmt::format("cannot write the journal: {}", std::strerror(errno)), {path});
    if (append && ::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0) {
      throw UserError(fmt::format("cannot cut the journal's torn last line: {}", std::strerror(errno)), {path});
    }
    ::lseek(fd_, 0, SEEK_END);
  }
  ~JournalWriter() { ::close(fd_); }
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  void line(const nlohmann::json& j) {
    const std::string text = j.dump() + "\n";
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw UserError(fmt::format("cannot write the journal: {}", std::strerror(errno)), {path_});
      done += static_cast<size_t>(n);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// The first difference between a journal's identity and this run's, as "what (there, now)"; empty when equal.
std::string identity_difference(const nlohmann::json& recorded, const nlohmann::json& now) {
  // The spec's path may differ (another working folder); its content may not.
  static const std::vector<std::pair<const char*, const char*>> fields = {
      {"target", "target"},
      {"emu_release", "emulated release"},
      {"macos", "macOS (of the device, or of the emulated rules)"},
      {"spec_hash", "spec (its content)"},
      {"samples_hash", "recorded samples (their content)"},
      {"dtypes", "dtypes"},
      {"ops", "--ops filter"},
      {"fallback", "fallback mode"},
      {"torch", "libtorch"},
      {"shard", "shard"},
      {"plan_hash", "plan (the operators this libtorch and registry give)"},
  };
  auto show = [](const nlohmann::json& j) {
    if (j.is_string()) return j.get<std::string>().empty() ? std::string("none") : j.get<std::string>();
    if (j.is_array()) {
      std::vector<std::string> words;
      for (const auto& w : j) words.push_back(w.is_string() ? w.get<std::string>() : w.dump());
      return fmt::format("{}", fmt::join(words, ","));
    }
    return j.dump();
  };
  for (const auto& [key, what] : fields) {
    const nlohmann::json a = recorded.value(key, nlohmann::json()), b = now.value(key, nlohmann::json());
    if (a == b) continue;
    if (std::string(key) == "spec_hash") {
      return fmt::format("{} ({} there, {} now)", what, recorded.value("spec", "?"), now.value("spec", "?"));
    }
    return fmt::format("{} ({} there, {} now)", what, show(a), show(b));
  }
  return "";
}

// --- the pool of workers ------------------------------------------------------------------------------------------

// The 64-bit word at the start of the file `fd`, mapped shared; null when it cannot be.
std::atomic<int64_t>* map_shared_word(int fd) {
  static_assert(std::atomic<int64_t>::is_always_lock_free, "a word shared between processes must be lock-free");
  void* p = ::mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::atomic<int64_t>*>(p);
}

// A descriptor moved above the ones a worker gets by number (0 to 4), so that dup2 onto those never meets itself
// (which would leave close-on-exec set); close-on-exec.
int above_worker_fds(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

// One 64-bit word of memory shared with a worker process: a file, unlinked at once, mapped by the parent here and by
// the worker, which inherits the descriptor (Note [Worker protocol]).
class SharedWord {
 public:
  SharedWord() {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/mps-audit-worker-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) throw UserError(fmt::format("cannot create a worker's state file: {}", std::strerror(errno)), {path});
    ::unlink(path.c_str());
    fd_ = above_worker_fds(fd);
    if (fd_ < 0 || ::ftruncate(fd_, sizeof(int64_t)) != 0) {
      throw UserError(fmt::format("cannot create a worker's state file: {}", std::strerror(errno)), {path});
    }
    word_ = map_shared_word(fd_);
    if (!word_) throw UserError(fmt::format("cannot map a worker's state file: {}", std::strerror(errno)), {path});
    word_->store(-1);
  }
  ~SharedWord() {
    ::munmap(word_, sizeof(int64_t));
    ::close(fd_);
  }
  SharedWord(const SharedWord&) = delete;
  SharedWord& operator=(const SharedWord&) = delete;
  int fd() const { return fd_; }
  std::atomic<int64_t>& word() { return *word_; }

 private:
  int fd_ = -1;
  std::atomic<int64_t>* word_ = nullptr;
};

struct Worker {
  pid_t pid = -1;
  int out_fd = -1;       // its standard output, read by the parent
  int in_fd = -1;        // its standard input, written by the parent; closed: the worker exits
  int lifeline_fd = -1;  // the write end of its lifeline, never written; closed (or the parent gone): it exits
  std::string buffer;
  bool ready = false;                 // it said "env": it may get work
  bool said_anything = false;         // for telling a worker that could not start from one that crashed
  long current = -1;                  // the probe it is working on (sent, not answered), or -1
  std::deque<size_t> ahead;           // those sent after it, in order, not answered (Note [Probes sent ahead])
  long last_sent = -1;                // the last probe sent to it (whose overload it is busy with)
  long seen = -1;                     // the last probe of `ahead` it was seen to begin, or -1
  std::shared_ptr<SharedWord> state;  // where the worker is: a probe and its stage (Note [Worker protocol])
  bool retiring = false;              // it said "retire": it gets no more work and exits after its result
  bool finishing = false;             // it said "finish": it gets the rest of its operator only
  std::deque<size_t> todo;            // the rest of its operator's probes
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point forked;  // when it was started (Note [Starts that pay])
  // It exited (its output closed), and the record of its probe waits for its exit status (Note [Workers that end]).
  bool ending = false;
  bool alive() const { return pid > 0; }
};

void set_cloexec(int fd) {
  ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

// Closes every descriptor from `first` up.
void close_descriptors_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  const long most = std::min<long>(::sysconf(_SC_OPEN_MAX), 1 << 16);
  for (int fd = first; fd < most; ++fd) ::close(fd);
}

// Whether `entry` ("NAME=value", as in `environ`) sets the variable `name`.
bool sets_variable(const char* entry, const std::string& name) {
  return std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=';
}

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

// Note [Half the workers first]
// A GPU sets CUDA contexts up side by side but no faster for it: sixteen workers starting at once were all ready
// 0.6 s after their first operation began (0.1 s for one alone), on an H100. So on CUDA half the workers start first
// and begin probing the sooner, and the others once one of them is ready. The warm default audit on CUDA, alternating
// on one H100: 6.42, 6.57, 6.62, 6.66 s against 6.62, 6.62, 6.83, 6.95 s with every worker started at once (a
// quarter first: 6.46-6.86 s). Elsewhere a worker's start is a fork, and every worker starts at once.
size_t workers_started_first(const c10::Device& device, size_t jobs) {
  return device.is_cuda() ? std::max<size_t>(1, jobs / 2) : jobs;
}

// Note [Starts that pay]
// A worker that starts in place of one that ended (or as a spare) is of use only if work is left for it once it is
// ready. Near the end of a run that is seldom so: the operators left are the cheapest (Note [Slowest operators
// first] in probe/probe_costs.cc), among them those that kill their worker, and the workers that are left finish
// them before a new one is ready; on a GPU the new one's CUDA context is set up meanwhile, which holds up the
// others' work, and taken down when the run ends, one context after another. So once a worker has started in this
// run (which says what a start takes here), a new one starts only while the work not yet handed out, by the
// figures that order it (a probe without one counts as the mean of those with one), is more than the workers that
// can take work would do in that time, counting each one started as one of them; and while fewer than two can take
// work. A worker that catches a fault ends after its operator (Note [Caught faults]), the cheapest operators at the
// end of a run hold most of those, and with one worker left its fault left the run with none: nineteen then started
// at once for 0.04 s of work, and the run waited half a second for their contexts. The order of the work, and so
// every record, is the same; only which worker runs a probe can change. The warm default audit on CUDA in a new
// folder (an H100, the release's figures) took 7.25-7.98 s with the first form of this rule against 7.68-8.24 s
// without it, alternating (docs/benchmarks.md).
size_t starts_that_pay(double pending_seconds, size_t able, double seconds_per_start, size_t room) {
  size_t starts = 0;
  while (starts < room &&
         (able + starts < 2 || pending_seconds / static_cast<double>(able + starts) > seconds_per_start)) {
    ++starts;
  }
  return starts;
}

// Note [Slow probes alone]
// A turn saves each of its probes a turn of the GPU among the processes that share it (Note [Probes in one turn] in
// probe/probe_op.cc): a few milliseconds at most. A probe expected to take longer gains nothing from one, and the
// slowest probes of a warm run are those that break the device: a turn in which the device broke runs its failed
// probes again, one at a time (Note [Turns that fail]), so such a probe broke the device twice, and each time every
// process on the GPU waited and a worker ended. So a probe whose figure is kAloneSeconds or more runs in a turn of its
// own: it joins none, and the probe after it begins a new one. The warm default audit on CUDA (one H100, the
// release's figures), alternating: 5.49-5.88 s with this rule against 5.88-6.08 s without it.
constexpr double kAloneSeconds = 0.05;

std::vector<bool> joins_turn(const std::vector<double>& expected) {
  std::vector<bool> joins(expected.size(), false);
  for (size_t k = 1; k < expected.size(); ++k) {
    joins[k] = expected[k] < kAloneSeconds && expected[k - 1] < kAloneSeconds;
  }
  return joins;
}

namespace {

class Pool {
 public:
  Pool(const RunOptions& o, std::string target, std::string log_path, const std::vector<Probe>& plan, const Spec& spec,
       std::string samples, std::vector<double> expected)
      : options_(o),
        target_(std::move(target)),
        log_path_(std::move(log_path)),
        plan_(plan),
        spec_(spec),
        samples_(std::move(samples)),
        expected_(std::move(expected)) {}
  ~Pool() { stop_all(); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Runs the probes of `groups` (each the plan indices of one operator) on `jobs` workers; calls on_env with what the
  // first worker reports and on_result for each result, in arrival order. Returns the signal that stopped it, or 0.
  template <typename E, typename F>
  int run(std::vector<std::vector<size_t>> groups, size_t jobs, E&& on_env, F&& on_result) {
    for (auto& group : groups) push_pending(std::move(group), /*front=*/false);
    jobs_ = jobs;
    // A fixed number of slots, so that references to them stay valid; the spares' slots start empty.
    workers_.assign(jobs + std::max<size_t>(1, jobs / 4), Worker{});
    const size_t first = workers_started_first(device_for(target_), jobs);
    for (size_t k = 0; k < first; ++k) start(workers_[k]);
    auto record = [&](size_t i, ProbeResult r) {
      r.op = plan_[i].op;
      r.dtype = plan_[i].dtype;
      on_result(i, r);
    };
    for (;;) {
      if (g_stop_signal) {
        stop_all();
        return g_stop_signal;
      }
      for (auto& w : workers_) dispatch(w);
      replenish();
      // Note [Workers at the end]
      // Once every probe has its record, the inputs of the ready workers left are closed (dispatch() did that) and
      // they exit; the run goes on to its reports without waiting for them, and they are reaped when the pool goes,
      // after the reports. A process with a CUDA context takes a second or more to end (the driver tears the context
      // down, one process after another), and the workers of a run end together. Workers still starting (spares,
      // replacements) are stopped now: they would otherwise set up their device (seconds on a GPU) meanwhile.
      if (pending_.empty() && working() == 0) {
        for (auto& w : workers_) {
          if (w.alive() && !w.ready && !w.ending) kill_and_let_go(w);
        }
        return 0;
      }
      std::vector<pollfd> fds;
      std::vector<Worker*> owners;
      for (auto& w : workers_) {
        if (w.out_fd >= 0) {
          fds.push_back({w.out_fd, POLLIN, 0});
          owners.push_back(&w);
        }
      }
      const bool waiting = std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.ending; });
      if (fds.empty() && !waiting) return 0;
      ::poll(fds.data(), fds.size(), waiting ? 5 : 200);
      reap_exited(record);
      if (g_stop_signal) continue;
      const auto now = std::chrono::steady_clock::now();
      for (size_t k = 0; k < fds.size(); ++k) {
        Worker& w = *owners[k];
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          char chunk[65536];
          const ssize_t n = ::read(w.out_fd, chunk, sizeof chunk);
          if (n > 0) {
            w.buffer.append(chunk, static_cast<size_t>(n));
            size_t nl;
            while ((nl = w.buffer.find('\n')) != std::string::npos) {
              handle_line(w, w.buffer.substr(0, nl), on_env, record);
              w.buffer.erase(0, nl + 1);
            }
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          ended(w, record);  // end of output: the worker exited
          continue;
        }
        if (w.current >= 0) note_progress(w, now);
        if (w.current >= 0 && std::chrono::duration<double>(now - w.started).count() > options_.timeout_s) {
          const bool finishing = w.finishing;
          const StageMark at = blame(w);
          kill_and_let_go(w);
          if (finishing || at.stage == ProbeStage::kTurn) {  // Note [Probes after a caught fault], [Turns that fail]
            requeue_rest(w);
            continue;
          }
          const bool on_target = at.stage == ProbeStage::kTarget;
          ProbeResult r;
          r.verdict = on_target ? Verdict::kTimeout : Verdict::kSkip;
          r.message = on_target ? fmt::format("no result after {:g} s; the worker was killed", options_.timeout_s)
                                : fmt::format("no reference: the CPU run did not finish in {:g} s", options_.timeout_s);
          r.seconds = options_.timeout_s;
          record(take_out(w, at.probe), r);
          requeue_rest(w);
        }
      }
    }
  }

 private:
  // Note [Spare workers]
  // Starting a worker costs seconds on a GPU (libtorch and its CUDA libraries, the spec and the recordings, the
  // device), and a worker that dies (a crash, a hang, a device left unusable) needs a new one. Once one has died,
  // the pool keeps a quarter as many workers again as --jobs (at least one) started and idle: a dead worker's work
  // goes to one that is ready, and the new start happens meanwhile. At most --jobs workers probe at once; the
  // spares are told to exit when nothing is left to hand out. A run in which no worker dies starts no spare.
  bool busy(const Worker& w) const { return w.alive() && (w.current >= 0 || !w.ahead.empty() || !w.todo.empty()); }

  // Starts workers while there is work that no running worker holds: up to --jobs, and the spares once a worker
  // has died; near the end of a run, only those that pay (Note [Starts that pay]).
  void replenish() {
    if (pending_.empty()) return;
    size_t alive = 0;
    for (const auto& w : workers_) alive += w.alive() ? 1 : 0;
    if (starts_seen_ == 0 && alive > 0) return;  // the others start once one is ready (Note [Half the workers first])
    const size_t wanted = jobs_ + (worker_died_ ? workers_.size() - jobs_ : 0);
    if (alive >= wanted) return;
    size_t starts = wanted - alive;
    if (starts_seen_ > 0) {
      starts = starts_that_pay(pending_seconds_, able(), start_seconds_ / static_cast<double>(starts_seen_), starts);
    }
    for (auto& w : workers_) {
      if (starts == 0) break;
      if (w.alive()) continue;
      start(w);
      --starts;
    }
  }

  // The workers that can take work: alive, starting or ready, and not on their way out.
  size_t able() const {
    size_t n = 0;
    for (const auto& w : workers_) {
      if (w.alive() && !w.ending && !w.retiring && !w.finishing && w.in_fd >= 0) ++n;
    }
    return n;
  }

  // Queues a group of probes to hand out, at the front (work given back) or the back, and counts its expected seconds.
  void push_pending(std::vector<size_t> group, bool front = true) {
    for (size_t i : group) pending_seconds_ += expected_[i];
    if (front) {
      pending_.push_front(std::move(group));
    } else {
      pending_.push_back(std::move(group));
    }
  }

  // Gives the first queued group to the worker, and no longer counts its expected seconds.
  void take_pending(Worker& w) {
    for (size_t i : pending_.front()) pending_seconds_ -= expected_[i];
    w.todo.assign(pending_.front().begin(), pending_.front().end());
    pending_.pop_front();
  }

  // Hands a ready worker its next probes, or closes its input when there are none (it then exits). A worker without
  // an operator takes the next one only while fewer than --jobs workers are busy; otherwise it waits.
  // Note [Probes sent ahead]
  // A worker is sent every dtype of the overload it begins at once, and while it holds no other, the next overload
  // of its operator, so that it finds its next probes waiting when it is done instead of waiting for the parent to
  // read its results and answer: a wake-up of another process per probe, which on an idle core of a virtual machine
  // takes longer than a small probe itself; and so that a worker on CUDA has an overload's probes to run in one turn
  // (Note [Probes in one turn] in probe/probe_op.cc). A probe sent ahead has not begun until the one before it has a
  // result (or the worker was seen to begin it, in a turn): when the worker dies or retires first, it goes back to
  // the queue.
  void dispatch(Worker& w) {
    if (!w.alive() || !w.ready || w.in_fd < 0 || w.retiring) return;
    if (w.current < 0) {
      if (w.todo.empty() && w.finishing) {
        let_go(w);
        return;
      }
      if (w.todo.empty() && !pending_.empty()) {
        if (working() >= jobs_) return;  // a spare, for now
        take_pending(w);
      }
      if (w.todo.empty() && working() < jobs_) take_an_overload(w);
      if (w.todo.empty()) {
        let_go(w);
        return;
      }
      send_overload(w);
      begin_next(w);
    }
    if (w.in_fd >= 0 && !w.todo.empty() && plan_[w.last_sent].op == plan_[w.current].op) send_overload(w);
  }

  // The probe sent after the current one, if any, becomes the current one, and begins now.
  static void begin_next(Worker& w) {
    w.current = w.ahead.empty() ? -1 : static_cast<long>(w.ahead.front());
    if (!w.ahead.empty()) w.ahead.pop_front();
    w.started = std::chrono::steady_clock::now();
  }

  size_t working() const {
    size_t n = 0;
    for (const auto& w : workers_) n += busy(w) ? 1 : 0;
    return n;
  }

  // Note [Overloads for idle workers]
  // When no operator is left to hand out, a worker without work takes the probes of one overload from the worker
  // with the most probes left: the last overload in that worker's list, all its dtypes, and never the overload that
  // worker is busy with. A worker's memory of an operator (the synthesis that worked, the first dtype the CPU took:
  // probe/probe_op.cc) is kept by overload, so every probe still meets the same memory as in one worker; only
  // kernels compiled at first use are compiled in both (on a GPU with empty kernel caches, the special_* functions
  // compile one per dtype, and the run's end waited for one worker going through both of an operator's overloads).
  void take_an_overload(Worker& thief) {
    Worker* from = nullptr;
    size_t best = 0;
    for (auto& w : workers_) {
      if (&w == &thief || !w.alive() || w.finishing || w.retiring || w.todo.empty()) continue;
      const std::string& last = plan_[w.todo.back()].op;
      size_t run = 0;
      for (auto it = w.todo.rbegin(); it != w.todo.rend() && plan_[*it].op == last; ++it) ++run;
      const bool own_overload = run == w.todo.size() && w.last_sent >= 0 && plan_[w.last_sent].op == last;
      if (!own_overload && run > best) {
        best = run;
        from = &w;
      }
    }
    if (!from) return;
    thief.todo.assign(from->todo.end() - static_cast<long>(best), from->todo.end());
    from->todo.erase(from->todo.end() - static_cast<long>(best), from->todo.end());
  }

  // Writes the probes of the next overload in the worker's list to its input, with one write, after those sent
  // before: the first line begins a turn, and the others join it ("\t+"; Note [Probes in one turn] in
  // probe/probe_op.cc).
  void send_overload(Worker& w) {
    const std::string op = plan_[w.todo.front()].op;
    std::vector<size_t> probes;
    while (!w.todo.empty() && plan_[w.todo.front()].op == op) {
      probes.push_back(w.todo.front());
      w.todo.pop_front();
    }
    std::vector<double> expected;
    for (size_t i : probes) expected.push_back(expected_[i]);
    const std::vector<bool> joins = joins_turn(expected);
    std::string text;
    for (size_t k = 0; k < probes.size(); ++k) {
      const size_t i = probes[k];
      text += fmt::format("{}\t{}\t{}{}\n", i, op, plan_[i].dtype, k > 0 && joins[k] ? "\t+" : "");
      w.ahead.push_back(i);
      w.last_sent = static_cast<long>(i);
    }
    // A worker that died meanwhile shows as the end of its output.
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(w.in_fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(w.in_fd);
        w.in_fd = -1;
        return;
      }
      done += static_cast<size_t>(n);
    }
  }

  template <typename E, typename R>
  void handle_line(Worker& w, const std::string& line, E& on_env, R& record) {
    w.said_anything = true;
    if (line.rfind("env ", 0) == 0) {
      on_env(run_environment_from_json(nlohmann::json::parse(line.substr(4))));
      w.ready = true;
      start_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - w.forked).count();
      ++starts_seen_;
    } else if (line == "retire") {
      w.retiring = true;
    } else if (line == "finish") {
      w.finishing = true;
      worker_died_ = true;  // as good as: a new worker will be needed
    } else if (line.rfind("result ", 0) == 0 && w.current >= 0) {
      const size_t space = line.find(' ', 7);
      ProbeResult r;
      try {
        r = probe_result_from_json(nlohmann::json::parse(line.substr(space + 1)));
      } catch (const std::exception& e) {
        r.verdict = Verdict::kError;
        r.message = std::string("unreadable result from the worker: ") + e.what();
      }
      const size_t i = static_cast<size_t>(w.current);
      begin_next(w);  // a worker that retires never begins it: it goes back to the queue when the worker has exited
      record(i, r);
    } else if (line.rfind("again ", 0) == 0 && w.current >= 0) {
      push_pending({static_cast<size_t>(w.current)});  // Note [Turns that fail]
      begin_next(w);
    }
  }

  template <typename R>
  void ended(Worker& w, R& record) {
    close_fd(w.in_fd);
    close_fd(w.out_fd);
    w.ending = true;
    int status = 0;
    if (try_reap(w.pid, status)) settle(w, status, record);
  }

  // What the exit of a worker means for its probes, once its wait status is known.
  template <typename R>
  void settle(Worker& w, int status, R& record) {
    const bool retired = w.retiring, finishing = w.finishing;
    w.pid = -1;
    release(w);
    if (w.current < 0 && !w.said_anything && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      throw UserError(fmt::format("a worker could not start: {}", last_log_line()));
    }
    // It retired after its last result: what it was sent after that goes back to the queue.
    if (retired) {
      requeue_rest(w);
      return;
    }
    // Ended between two probes: we closed its input, or someone else killed it; then the rest of its operator goes
    // back to the queue, for another worker.
    if (w.current < 0) {
      if (!w.todo.empty()) {
        push_pending({w.todo.begin(), w.todo.end()});
        w.todo.clear();
      }
      return;
    }
    const StageMark at = blame(w);
    if (finishing || at.stage == ProbeStage::kTurn) {  // Note [Probes after a caught fault], [Turns that fail]
      requeue_rest(w);
      return;
    }
    ProbeResult r;
    const std::string how = WIFSIGNALED(status)
                                ? fmt::format("died of signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))
                                : fmt::format("exited with status {}", WEXITSTATUS(status));
    const bool on_target = at.stage == ProbeStage::kTarget;
    r.verdict = on_target ? Verdict::kCrash : Verdict::kSkip;
    r.message = on_target ? "the worker " + how : "no reference: the CPU run killed the worker (it " + how + ")";
    record(take_out(w, at.probe), r);
    requeue_rest(w);
  }

  // Note [Probes after a caught fault]
  // A worker that caught a fault (Note [Caught faults]) goes on with the rest of that operator, one probe at a time,
  // in a process the fault may have left in an unknown state: a lock its abandoned frames held, say. So when it hangs
  // or dies there, the probe is not recorded: it goes back to the front of the queue and runs again in a new worker,
  // whose verdict is the record (a probe that hangs anywhere costs the time limit twice).

  // Note [Turns that fail]
  // A worker on CUDA runs an overload's probes in one turn (Note [Probes in one turn] in probe/probe_op.cc) and
  // answers when the turn is done. Its shared word says where it is: the probe it began last, and whether in its CPU
  // reference, on the target, or waiting for the turn's outputs. A worker that dies or hangs in a probe's reference or
  // on its target gets that probe recorded, as alone; the others of the turn, done or not, run again elsewhere, one
  // by one. One that dies or hangs while its turn's outputs are copied back, or whose device is unusable after a
  // turn in which probes failed (the device may have failed in any of them: its errors come at the wait, and every
  // probe whose outputs it held reports them), names no probe: the probes it cannot vouch for ("again") run again,
  // each alone in a worker of its own turn, where the one that breaks the device is found out. The time limit of a
  // turn's probe runs from when the worker was seen to begin it.

  // Where the worker that died or was killed was: the probe and stage it marked last, when it holds that probe (the
  // current one, or one sent after it, which a turn reaches before the current one has its result); else the current
  // one, before its CPU reference.
  StageMark blame(const Worker& w) const {
    const StageMark m = read_mark(w.state->word().load());
    if (m.probe >= 0 && (m.probe == w.current || std::find(w.ahead.begin(), w.ahead.end(), m.probe) != w.ahead.end())) {
      return m;
    }
    return {w.current, ProbeStage::kReference};
  }

  // A worker in a turn answers at its end: the time limit of a probe it was seen to begin runs from then.
  static void note_progress(Worker& w, std::chrono::steady_clock::time_point now) {
    const StageMark m = read_mark(w.state->word().load());
    if (m.probe >= 0 && m.probe != w.seen && std::find(w.ahead.begin(), w.ahead.end(), m.probe) != w.ahead.end()) {
      w.seen = m.probe;
      w.started = now;
    }
  }

  // Takes probe i out of what the worker holds, for a record; returns i.
  static size_t take_out(Worker& w, long i) {
    if (w.current == i) {
      w.current = -1;
    } else {
      w.ahead.erase(std::remove(w.ahead.begin(), w.ahead.end(), static_cast<size_t>(i)), w.ahead.end());
    }
    return static_cast<size_t>(i);
  }

  // Note [Probes that end their worker]
  // An operator whose probe killed its worker (a crash, a hang) or left its device unusable usually does so in every
  // dtype, and each time a new worker has to start: load libtorch, read the spec, set up the device (seconds on a
  // GPU). Its other probes go back to the front of the queue one by one, for whichever workers come free first, so
  // that those starts happen side by side instead of one after another in one worker.
  void requeue_rest(Worker& w) {
    std::deque<size_t> rest = std::move(w.ahead);  // sent, without a record
    if (w.current >= 0) rest.push_front(static_cast<size_t>(w.current));
    rest.insert(rest.end(), w.todo.begin(), w.todo.end());
    for (auto it = rest.rbegin(); it != rest.rend(); ++it) push_pending({*it});
    w.current = -1;
    w.ahead.clear();
    w.todo.clear();
    worker_died_ = true;
  }

  // Note [Workers that end]
  // A worker's output closes when it exits, but a process with a CUDA context is gone a tenth of a second or more
  // later (the driver tears the context down), and one that was killed as late. The pool does not wait for that
  // while it has work to hand out: a worker whose input it closes (nothing left for it, or the rest of its operator
  // done after a caught fault) or that it kills (a timeout) is let go at once, and its slot may start a new worker;
  // it is reaped once it is gone, looked for between reads. Only the record of a probe whose worker died waits for
  // the exit status, which says how it died; meanwhile the pool reads and hands out work as before. Workers still
  // going when the run ends are killed and reaped when the pool goes, after the reports (Note [Workers at the end]).

  // Whether the process is gone, reaped now with its wait status in `status`; without waiting.
  static bool try_reap(pid_t pid, int& status) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    return r == pid || (r < 0 && errno != EINTR);
  }

  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Closes what the pool holds of a worker and clears its state; the slot is free once pid is -1.
  void release(Worker& w) {
    close_fd(w.in_fd);
    close_fd(w.out_fd);
    close_fd(w.lifeline_fd);
    w.buffer.clear();
    w.ready = false;
    w.retiring = false;
    w.finishing = false;
    w.ending = false;
  }

  // Stops reading from the worker and closes its input and its lifeline (it exits, if it was not killed); it is
  // reaped later.
  void let_go(Worker& w) {
    exiting_.push_back(w.pid);
    w.pid = -1;
    release(w);
  }

  void kill_and_let_go(Worker& w) {
    ::kill(w.pid, SIGKILL);
    let_go(w);
  }

  // Settles workers that ended once they are gone, and reaps the workers let go that are gone.
  template <typename R>
  void reap_exited(R& record) {
    for (auto& w : workers_) {
      int status = 0;
      if (w.ending && try_reap(w.pid, status)) settle(w, status, record);
    }
    exiting_.erase(std::remove_if(exiting_.begin(), exiting_.end(),
                                  [](pid_t pid) {
                                    int status = 0;
                                    return try_reap(pid, status);
                                  }),
                   exiting_.end());
  }

  // Stops every worker now: its input closes and it is killed (a probe in progress has no record; at the end of a
  // run, none is in progress: Note [Workers at the end]), and reaped.
  void stop_all() {
    for (auto& w : workers_) {
      if (w.alive()) kill_and_let_go(w);
    }
    for (pid_t pid : exiting_) {
      ::kill(pid, SIGKILL);
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    exiting_.clear();
  }

  std::string last_log_line() const {
    std::string text;
    try {
      text = read_file(log_path_);
    } catch (const UserError&) {
    }
    std::string last;
    for (const auto& line : split_list(text, '\n')) {
      if (!line.empty()) last = line;
    }
    return last.empty() ? "no message (see " + log_path_ + ")" : last;
  }

  void start(Worker& w) {
    int to_worker[2], from_worker[2], lifeline[2];
    if (::pipe(to_worker) != 0) throw UserError("cannot create a pipe for a worker");
    if (::pipe(from_worker) != 0) {
      ::close(to_worker[0]);
      ::close(to_worker[1]);
      throw UserError("cannot create a pipe for a worker");
    }
    if (::pipe(lifeline) != 0) {
      for (int fd : {to_worker[0], to_worker[1], from_worker[0], from_worker[1]}) ::close(fd);
      throw UserError("cannot create a pipe for a worker");
    }
    // No worker may inherit another's pipes (it would hold that one's input open); dup2 below clears the flag on
    // the worker's own ends.
    for (int fd : {to_worker[0], to_worker[1], from_worker[0], from_worker[1], lifeline[0], lifeline[1]}) {
      set_cloexec(fd);
    }
    lifeline[0] = above_worker_fds(lifeline[0]);  // it becomes the worker's descriptor 3
    if (!w.state) w.state = std::make_shared<SharedWord>();
    w.state->word().store(-1);
    const int rc = forked_workers() ? fork_worker(w, to_worker[0], from_worker[1], lifeline[0])
                                    : spawn_worker(w, to_worker[0], from_worker[1], lifeline[0]);
    ::close(to_worker[0]);
    ::close(from_worker[1]);
    ::close(lifeline[0]);
    if (rc != 0) {
      ::close(to_worker[1]);
      ::close(from_worker[0]);
      ::close(lifeline[1]);
      w.pid = -1;
      throw UserError(fmt::format("cannot start a worker ({}): {}", options_.self, std::strerror(rc)));
    }
    w.in_fd = to_worker[1];
    w.out_fd = from_worker[0];
    w.lifeline_fd = lifeline[1];
    w.current = w.last_sent = w.seen = -1;
    w.ahead.clear();
    w.ready = false;
    w.said_anything = false;
    w.forked = std::chrono::steady_clock::now();
  }

  // Note [Forked workers]
  // On Linux a worker is a fork of the run, which has loaded libtorch and its CUDA libraries already: half a second
  // of a core less per worker on the GPU machine, and a run whose probes crash starts one per crash. It also has the
  // run's spec, parsed, and its recorded samples, loaded (process_recordings()), so it reads neither again. The run has
  // not touched a device (CUDA cannot be used in a child forked after it was set up: the host block of the results,
  // which asks CUDA how many devices it has, is a worker's, or filled in after the workers are done when none
  // started), runs no threads of its own, and flushes its output before it forks. The child takes the worker's
  // descriptors, closes every other one (the other workers' pipes, the journal, the folder lock), restores default
  // signal dispositions and leaves the run's process group, as a spawned worker does, and runs run_worker() as
  // `mps-audit __worker` would. Elsewhere (macOS, whose system frameworks do not survive a fork), and with
  // MPS_AUDIT_WORKERS=exec, workers are spawned from the binary with posix_spawn.
  static bool forked_workers() {
#ifdef __linux__
    static const bool forked = [] {
      const char* how = std::getenv("MPS_AUDIT_WORKERS");
      return !(how && std::string(how) == "exec");
    }();
    return forked;
#else
    return false;
#endif
  }

  // Forks a worker; returns 0 or an errno.
  int fork_worker(Worker& w, int in, int out, int lifeline) {
    WorkerOptions o;
    o.target = target_;
    o.spec = options_.spec;
    o.emu_release = options_.emu_release;
    o.emu_macos = options_.emu_macos;
    o.samples = samples_;
    o.run_spec = &spec_;
    o.parent = ::getpid();
    o.lifeline = kLifelineFd;
    o.state = kStateFd;
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return errno;
    if (pid > 0) {
      w.pid = pid;
      return 0;
    }
    ::setpgid(0, 0);
    struct sigaction default_action;
    std::memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    for (int s : {SIGPIPE, SIGINT, SIGTERM}) ::sigaction(s, &default_action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Descriptors 0 and 1 first: the pipes' own numbers are 3 or more, and may be 3 or 4.
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || log < 0 || ::dup2(log, STDERR_FILENO) < 0 ||
        ::dup2(lifeline, kLifelineFd) < 0 || ::dup2(w.state->fd(), kStateFd) < 0) {
      std::_Exit(kExitBadInput);
    }
    close_descriptors_from(kStateFd + 1);
    for (const auto& [name, value] : worker_variables(target_, options_.fallback, environ)) {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
    int status = kExitBadInput;
    try {
      status = run_worker(o, std::cout);
    } catch (const UserError& e) {
      std::cerr << format_diagnostic(e) << "\n";
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
    }
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(status);
  }

  // Spawns `mps-audit __worker`; returns 0 or an errno.
  int spawn_worker(Worker& w, int in, int out, int lifeline) {
    std::vector<std::string> words = {options_.self, "__worker",
                                      "--target",    target_,
                                      "--spec",      options_.spec,
                                      "--parent",    std::to_string(::getpid()),
                                      "--emu-macos", std::to_string(options_.emu_macos)};
    if (!options_.emu_release.empty()) {
      words.push_back("--emu-release");
      words.push_back(options_.emu_release);
    }
    words.push_back("--samples");
    words.push_back(samples_);
    words.push_back("--lifeline");
    words.push_back(std::to_string(kLifelineFd));
    words.push_back("--state");
    words.push_back(std::to_string(kStateFd));
    std::vector<char*> argv;
    for (auto& s : words) argv.push_back(s.data());
    argv.push_back(nullptr);
    const auto variables = worker_variables(target_, options_.fallback, environ);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      const bool replaced =
          std::any_of(variables.begin(), variables.end(), [&](const auto& v) { return sets_variable(*e, v.first); });
      if (!replaced) env_strings.emplace_back(*e);
    }
    for (const auto& [name, value] : variables) env_strings.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, lifeline, kLifelineFd);
    posix_spawn_file_actions_adddup2(&actions, w.state->fd(), kStateFd);
    // Its own process group (a terminal's Ctrl-C is the parent's to handle), default signal dispositions (the
    // parent ignores SIGPIPE and catches SIGINT and SIGTERM), and no blocked signals.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, none;
    sigemptyset(&defaults);
    for (int s : {SIGPIPE, SIGINT, SIGTERM}) sigaddset(&defaults, s);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const int rc = posix_spawn(&w.pid, argv[0], &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
  }

  const RunOptions& options_;
  std::string target_, log_path_;
  const std::vector<Probe>& plan_;
  const Spec& spec_;     // the run's, which forked workers take as it is
  std::string samples_;  // the recorded samples file for the workers, or "none"
  std::deque<std::vector<size_t>> pending_;
  std::vector<Worker> workers_;  // --jobs slots, then the spares' (Note [Spare workers])
  std::vector<pid_t> exiting_;   // let go, not yet reaped (Note [Workers that end])
  size_t jobs_ = 0;
  bool worker_died_ = false;
  std::vector<double> expected_;  // each probe's expected seconds, by plan index (Note [Starts that pay])
  double pending_seconds_ = 0;    // the expected seconds of pending_'s probes
  double start_seconds_ = 0;      // from start to "env", over the starts_seen_ workers that got there
  size_t starts_seen_ = 0;
};

class Progress {
 public:
  Progress(std::ostream& err, size_t total, bool enabled, bool tty, std::string where)
      : err_(err), total_(total), enabled_(enabled), tty_(tty), where_(std::move(where)) {}
  void update(size_t done, const ProbeResult& last) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0;
    const int percent = total_ ? static_cast<int>(100 * done / total_) : 100;
    if (tty_) {
      err_ << fmt::format("\r[{}/{}] {:3d}% ETA {:4.0f}s  {:<48.48}", done, total_, percent, eta,
                          last.op + " " + last.dtype)
           << std::flush;
      if (done == total_) err_ << "\n";
    } else if (percent >= next_percent_ || done == total_) {
      err_ << fmt::format("progress on {}: {}/{} probes ({}%), {:.0f}s elapsed, ETA {:.0f}s\n", where_, done, total_,
                          percent, elapsed, eta);
      next_percent_ = percent / 10 * 10 + 10;
    }
  }

 private:
  std::ostream& err_;
  size_t total_;
  bool enabled_, tty_;
  std::string where_;
  int next_percent_ = 10;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// A worker's work, one line at a time, read by the thread that runs the probes: no other thread hands it over.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line without its newline; nullopt when the input has closed.
  std::optional<std::string> next() {
    for (;;) {
      if (auto line = take_line()) return line;
      if (!read_more(/*wait=*/true)) return std::nullopt;
    }
  }

  // The next line if it is here already (sent, whether read yet or not) and `wanted`; else nullopt, and the line
  // stays for next().
  std::optional<std::string> next_here(const std::function<bool(const std::string&)>& wanted) {
    if (buffer_.find('\n', start_) == std::string::npos) read_more(/*wait=*/false);
    const size_t nl = buffer_.find('\n', start_);
    if (nl == std::string::npos || !wanted(buffer_.substr(start_, nl - start_))) return std::nullopt;
    return take_line();
  }

 private:
  std::optional<std::string> take_line() {
    const size_t nl = buffer_.find('\n', start_);
    if (nl == std::string::npos) return std::nullopt;
    std::string line = buffer_.substr(start_, nl - start_);
    start_ = nl + 1;
    return line;
  }

  // Reads what there is, waiting for it or not; false at the end of the input.
  bool read_more(bool wait) {
    buffer_.erase(0, start_);
    start_ = 0;
    if (closed_) return false;
    for (;;) {
      if (!wait) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) return true;
      }
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        closed_ = true;
        return false;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
      return true;
    }
  }

  int fd_;
  std::string buffer_;
  size_t start_ = 0;
  bool closed_ = false;
};

// Waits on a thread of its own for the lifeline (a pipe whose other end only the parent holds, and never writes) to
// close, and then ends the process, whatever it is busy with. See Note [Worker protocol].
void watch_lifeline(int fd) {
  std::thread([fd] {
    char c;
    while (::read(fd, &c, 1) < 0 && errno == EINTR) {
    }
    std::_Exit(kExitOk);  // the parent is gone
  }).detach();
}

// Refuses a spec file with nothing in it (only blanks and comments): it would probe every operator with synthesized
// inputs as if that was meant, and an empty file is far more often a mistake (a wrong path, /dev/null, a failed
// download) than a request.
void check_spec_not_empty(const std::string& text, const std::string& path) {
  bool in_comment = false;
  for (char c : text) {
    if (c == '\n') in_comment = false;
    if (in_comment || c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '#') {
      in_comment = true;
      continue;
    }
    return;
  }
  throw UserError(
      "the spec is empty; for one without entries (every operator gets synthesized inputs in the default dtypes) "
      "write 'version: 1'",
      {path});
}

}  // namespace

std::string Shard::to_string() const {
  return count == 0 ? "" : fmt::format("{}/{}", index, count);
}

Shard parse_shard(const std::string& text) {
  static const std::regex form(R"(([0-9]{1,6})/([0-9]{1,6}))");
  std::smatch m;
  if (!std::regex_match(text, m, form)) {
    throw UserError(fmt::format("--shard '{}' is not K/N (the K-th of N slices of the plan, e.g. 2/3)", text));
  }
  Shard s{std::stoul(m[1].str()), std::stoul(m[2].str())};
  if (s.count == 0 || s.index == 0 || s.index > s.count) {
    throw UserError(fmt::format("--shard {}: K must be between 1 and N, and N at least 1", text));
  }
  return s;
}

std::vector<size_t> shard_slice(const std::vector<std::string>& plan_ops, const Shard& shard) {
  std::vector<size_t> all(plan_ops.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (shard.count == 0) return all;
  struct Group {
    size_t first, size;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < plan_ops.size(); ++i) {
    if (i == 0 || plan_ops[i] != plan_ops[i - 1]) groups.push_back({i, 0});
    ++groups.back().size;
  }
  std::vector<size_t> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].size > groups[b].size; });
  std::vector<size_t> load(shard.count, 0), owner(groups.size(), 0);
  for (size_t g : order) {
    const size_t k = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[g] = k;
    load[k] += groups[g].size;
  }
  std::vector<size_t> slice;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (owner[g] != shard.index - 1) continue;
    for (size_t i = 0; i < groups[g].size; ++i) slice.push_back(groups[g].first + i);
  }
  return slice;
}

// Note [Worker environment]
// What a run sets in its workers' environment, beyond its own: PYTORCH_ENABLE_MPS_FALLBACK as --fallback says, and
// on CUDA, CUDA_DEVICE_MAX_CONNECTIONS=1 unless the run's environment sets it. A CUDA context sets up that many
// hardware work queues (8 by default), and the driver sets contexts up one after another: on the H100 machine,
// 16 processes starting at once took 1.2-2.4 s each to run a first operation, and 0.1-0.5 s with one queue. A
// worker runs its probes one after another on one stream, so more queues gain it nothing; the warm audit there took
// 11.0-11.6 s with one queue against 15.3-16.4 s, every record the same.
std::vector<std::pair<std::string, std::string>> worker_variables(const std::string& target,
                                                                  const std::string& fallback,
                                                                  const char* const* environment) {
  std::vector<std::pair<std::string, std::string>> set = {
      {"PYTORCH_ENABLE_MPS_FALLBACK", fallback == "on" ? "1" : "0"}};
  if (target == "cuda") {
    const std::string name = "CUDA_DEVICE_MAX_CONNECTIONS";
    bool given = false;
    for (const char* const* e = environment; e && *e; ++e) given = given || sets_variable(*e, name);
    if (!given) set.emplace_back(name, "1");
  }
  return set;
}

nlohmann::json plan_identity_line(const nlohmann::json& identity) {
  return {{"journal", kJournalVersion}, {"plan", identity}};
}

Journal parse_journal(const std::string& text, const std::string& path) {
  Journal journal;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    ++line_number;
    const size_t nl = text.find('\n', pos);
    const bool last = nl == std::string::npos || text.find_first_not_of(" \t\r\n", nl + 1) == std::string::npos;
    const std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // A kill while writing leaves the last line without its newline: that probe simply runs again.
      if (last) {
        journal.torn = true;
        break;
      }
      throw UserError("not a journal line (not JSON)", {path, line_number, 1});
    }
    if (nl == std::string::npos) {  // complete JSON, but its newline never made it: rewrite it
      journal.torn = true;
      break;
    }
    if (line_number == 1) {
      if (!j.is_object() || j.value("journal", 0) != kJournalVersion || !j.contains("plan") || !j["plan"].is_object()) {
        throw UserError("not the journal of a run of this mps-audit (its first line does not identify the run's plan)",
                        {path, 1, 1});
      }
      journal.identity = j["plan"];
    } else if (j.is_object() && j.contains("environment")) {
      journal.environment = run_environment_from_json(j["environment"]);
    } else {
      try {
        journal.records.push_back(probe_result_from_json(j));
      } catch (const std::exception& e) {
        throw UserError(fmt::format("not a journal line: {}", e.what()), {path, line_number, 1});
      }
    }
    pos = nl + 1;
    journal.valid_bytes = pos;
  }
  return journal;
}

int run_audit(const RunOptions& requested, std::ostream& out, std::ostream& err) {
  RunOptions o = requested;
  check_report_formats(o.formats);
  std::optional<Results> baseline;
  if (!o.baseline.empty()) baseline = load_results(o.baseline);
  if (o.fallback != "on" && o.fallback != "off") {
    throw UserError(fmt::format("--fallback must be on or off, not '{}'", o.fallback));
  }
  for (const auto& d : o.dtypes) {
    if (!parse_dtype(d)) throw UserError(fmt::format("unknown dtype '{}'{}", d, did_you_mean(d, known_dtype_names())));
  }
  std::vector<Verdict> fail_on;
  for (const auto& v : o.fail_on) {
    auto parsed = parse_verdict(v);
    if (!parsed) {
      std::vector<std::string> names;
      for (Verdict k : kAllVerdicts) names.emplace_back(to_string(k));
      throw UserError(fmt::format("unknown verdict '{}' in --fail-on{}", v, did_you_mean(v, names)));
    }
    fail_on.push_back(*parsed);
  }
  if (!std::isfinite(o.timeout_s) || o.timeout_s <= 0) {
    throw UserError(
        fmt::format("--timeout {} is not a positive number of seconds (for no practical limit, give a "
                    "large one such as 86400)",
                    o.timeout_s));
  }
  if (o.jobs && *o.jobs < 1) throw UserError(fmt::format("--jobs {}: it takes 1 worker or more", *o.jobs));
  const Shard shard = o.shard.empty() ? Shard{} : parse_shard(o.shard);
  std::regex filter;
  try {
    filter = std::regex(o.ops.empty() ? ".*" : o.ops);
  } catch (const std::regex_error& e) {
    throw UserError(fmt::format("--ops: invalid regular expression '{}': {}", o.ops, e.what()));
  }
  if (o.emu_macos < 11 || o.emu_macos > 30)
    throw UserError(fmt::format("--emu-macos {} is not a macOS version", o.emu_macos));
  // The spec and release the flags name, or the defaults (Note [Data homes]): the workers get these paths.
  if (o.spec.empty()) o.spec = default_spec_path();
  if (!o.emu_release.empty()) o.emu_release = release_folder(o.emu_release);
  std::string why;
  const std::string target = resolve_target(o.target, why);
  const emu::ExpectationMode expectation_mode = emu::expectation_mode(o.expectations, target);
  const std::vector<std::string> known = aten_ops();
  const std::string spec_text = read_file(o.spec);
  check_spec_not_empty(spec_text, o.spec);
  const Spec spec = parse_spec(spec_text, o.spec, known);
  // The recorded samples, read here too: a file that cannot be read stops the run before it starts, and its hash and
  // what it dropped go in the plan's identity and the environment.
  // They are the process's (process_recordings()): a worker forked from the run has them loaded already.
  std::string samples_path = "none";
  if (o.samples != "none") {
    const std::string path = o.samples.empty() ? default_recordings_path() : o.samples;
    if (!o.samples.empty() && !path_exists(path)) throw UserError("--samples: no such file", {path});
    if (!path.empty()) samples_path = path;
  }
  set_recordings_choice(samples_path);
  const Recordings* recordings = process_recordings();

  // What the registry says of each op for the target's key: the emulated release's YAML, or the live dispatcher.
  std::string release_dir = o.emu_release;
  if (target == "mps-emu" && release_dir.empty()) release_dir = emu::find_release_dir(compat::kTorchVersion);
  if (target == "mps-emu" && release_dir.empty()) {
    throw UserError(
        fmt::format("no registry data for libtorch {} to emulate MPS with: pass --emu-release with a "
                    "folder holding its native_functions.yaml",
                    compat::kTorchVersion));
  }
  const Registry statuses =
      load_registry(target == "mps-emu" ? release_dir : std::string(kLiveSource), "", registry_key(target));
  // PyTorch's own expectations of real MPS: the emulated release's, or on a Mac the linked release's.
  const emu::RunExpectations expecting = emu::run_expectations(
      expectation_mode, target, target == "mps-emu" ? release_dir : emu::find_release_dir(compat::kTorchVersion),
      o.emu_macos, target == "mps" ? macos_version() : "");
  err << expecting.none_line(target);
  const Registry on_cpu = load_registry(kLiveSource, "", "CPU");

  std::vector<Probe> whole;
  std::vector<std::string> dtypes = o.dtypes.empty() ? spec.dtypes : o.dtypes;
  const std::set<std::pair<std::string, std::string>> pairs(o.pairs.begin(), o.pairs.end());
  if (!pairs.empty()) {
    dtypes.clear();
    for (const auto& [op, dtype] : pairs) {
      if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) dtypes.push_back(dtype);
    }
  }
  for (const auto& name : known) {
    if (!std::regex_search(name, filter)) continue;
    const RegistryEntry* cpu = on_cpu.find(name);
    if (!cpu || cpu->status == OpStatus::kNone) continue;  // the CPU cannot run it: no reference
    const OpSpec* entry = spec.find(name);
    for (const auto& d : dtypes) {
      if (entry && !entry->dtypes.empty() &&
          std::find(entry->dtypes.begin(), entry->dtypes.end(), d) == entry->dtypes.end()) {
        continue;
      }
      if (!pairs.empty() && !pairs.count({name, d})) continue;
      whole.push_back({name, d});
    }
  }
  if (whole.empty()) throw UserError(fmt::format("no operator matches --ops '{}'", o.ops));
  std::vector<std::string> whole_ops;
  for (const auto& p : whole) whole_ops.push_back(p.op);
  std::vector<Probe> plan;
  for (size_t i : shard_slice(whole_ops, shard)) plan.push_back(whole[i]);
  std::string plan_text;
  for (const auto& p : plan) plan_text += p.op + "\t" + p.dtype + "\n";

  // Every line this run writes says when MPS is emulated.
  std::string where = target, release_version;
  if (target == "mps-emu") {
    release_version = resolve_release(release_dir, "MPS").version;
    where +=
        " — " + emu::emulator_label(release_version.empty() ? compat::kTorchVersion : release_version, o.emu_macos);
  }
  const nlohmann::json identity = {
      {"spec", o.spec},
      {"spec_hash", content_hash(spec_text)},
      {"samples_hash", recordings ? recordings->summary().hash : ""},
      {"target", target},
      {"emu_release", target == "mps-emu" ? (release_version.empty() ? release_dir : release_version) : ""},
      {"macos", target == "mps-emu" ? o.emu_macos
                : target == "mps"   ? macos_major_version()
                                    : 0},
      {"dtypes", dtypes},
      {"ops", o.ops},
      {"fallback", o.fallback},
      {"expectations",
       expecting.expectations ? emu::to_string(expecting.mode) + " " + expecting.expectations->hash() : "none"},
      {"torch", compat::kTorchVersion},
      {"shard", shard.to_string()},
      {"plan_hash", content_hash(plan_text)},
      {"planned", plan.size()},
  };

  // From here on the folder is ours: nothing above wrote anything. A SIGINT or SIGTERM from now on stops the run
  // with its reports written (the pool sees it before handing out anything).
  std::optional<StopSignals> signals(std::in_place);
  make_directories(o.out_dir);
  const FolderLock lock(o.out_dir);
  const std::string journal_path = join_path(o.out_dir, "journal.jsonl");
  std::vector<ProbeResult> results(plan.size());
  std::vector<bool> done(plan.size(), false);
  size_t finished = 0;
  Journal recorded;
  bool resuming = false;
  if (o.resume && path_exists(journal_path)) {
    recorded = parse_journal(read_file(journal_path), journal_path);
    resuming = !recorded.identity.is_null();
  }
  if (resuming) {
    const std::string difference = identity_difference(recorded.identity, identity);
    if (!difference.empty()) {
      throw UserError(fmt::format("--resume: this folder's run was made with another {}; start it anew without "
                                  "--resume, or in another --out",
                                  difference),
                      {journal_path});
    }
    std::map<std::pair<std::string, std::string>, size_t> index;
    for (size_t i = 0; i < plan.size(); ++i) index[{plan[i].op, plan[i].dtype}] = i;
    for (auto& r : recorded.records) {
      const auto it = index.find({r.op, r.dtype});
      if (it == index.end()) {
        throw UserError(
            fmt::format("--resume: the journal has a record of {} {}, which is not in this run's plan", r.op, r.dtype),
            {journal_path});
      }
      if (!done[it->second]) ++finished;
      done[it->second] = true;
      results[it->second] = std::move(r);
    }
  }
  JournalWriter journal(journal_path, resuming, recorded.valid_bytes);
  if (!resuming) journal.line(plan_identity_line(identity));

  const std::string log_path = join_path(o.out_dir, "workers.log");
  const std::string log_header =
      fmt::format("standard error of the workers of a run on {}{}\n", where, resuming ? " (resumed)" : "");
  if (resuming && path_exists(log_path)) {
    write_file_atomically(log_path, read_file(log_path) + log_header);
  } else {
    write_file_atomically(log_path, log_header);
  }

  RunEnvironment env;
  env.target = target;
  env.requested = o.target;
  env.fallback_mode = o.fallback;
  env.spec = o.spec;
  env.spec_hash = identity["spec_hash"].get<std::string>();
  if (recordings) {
    env.samples = recordings->summary().path;
    env.samples_hash = recordings->summary().hash;
    env.samples_calls = recordings->summary().kept;
    for (const auto& [why, n] : recordings->summary().dropped) env.samples_dropped += n;
  }
  // The host block (`mps-audit env`, common/environment.h) is the first worker's, or filled in once the workers are
  // done when none started: asking CUDA how many devices it has sets up its driver in this process, and workers
  // forked from it could not use CUDA then (Note [Forked workers]).
  env.torch_version = compat::kTorchVersion;
  // What the probes ran with (the workers' environment, set from --fallback), not the parent's own variable.
  env.fallback_variable = o.fallback == "on" ? "1" : "0";
  env.device = device_for(target).str();
  if (target == "mps-emu") {
    env.emulator = emu::emulator_label(release_version.empty() ? compat::kTorchVersion : release_version, o.emu_macos);
  }
  expecting.describe(env);
  if (recorded.environment) {
    env.device = recorded.environment->device;
    env.emulator = recorded.environment->emulator;
    env.torch_version = recorded.environment->torch_version;
  }

  // What is left to run, by operator name (every overload: logaddexp and logaddexp.out meet the same kernels, which
  // CUDA compiles at first use in each process), each in plan order.
  // Workers take the operators that took longest in the last run in this folder (or the baseline) first, else those
  // with the most probes (plan order among equals): an operator's probes run one after another in one worker, so a slow
  // one begun last would leave the other workers idle at the end while it finishes (Note [Slowest operators first] in
  // probe/probe_costs.cc). Records still take their places in plan order.
  std::vector<std::vector<size_t>> groups;
  size_t to_run = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (done[i]) continue;
    if (groups.empty() || base_operator_name(plan[groups.back().front()].op) != base_operator_name(plan[i].op))
      groups.emplace_back();
    groups.back().push_back(i);
    ++to_run;
  }
  const std::string costs_path = join_path(o.out_dir, kProbeCostsFile);
  ProbeCosts costs = read_probe_costs(costs_path, target);
  if (baseline) add_missing_costs(costs, *baseline);
  if (const std::string release = emu::find_release_dir(compat::kTorchVersion); !release.empty()) {
    add_missing_costs(costs, read_probe_costs(release_costs_path(release, target), target));
  }
  std::vector<double> expected;  // each probe's seconds, as far as the figures say (Note [Starts that pay])
  {
    std::vector<std::pair<std::string, std::string>> probes;
    probes.reserve(plan.size());
    for (const auto& p : plan) probes.emplace_back(p.op, p.dtype);
    expected = expected_seconds(probes, costs);
    order_slowest_first(groups, expected);
  }
  const long cores = std::max<long>(1, static_cast<long>(std::thread::hardware_concurrency()));
  const size_t jobs = std::min<size_t>(static_cast<size_t>(o.jobs ? *o.jobs : cores), groups.size());
  err << why;
  const std::string slice =
      shard.count ? fmt::format(" (shard {} of the plan's {})", shard.to_string(), whole.size()) : std::string();
  if (o.resume && !resuming) err << fmt::format("--resume: nothing recorded in {} yet: a new run\n", o.out_dir);
  if (resuming) {
    err << fmt::format("resuming the run in {}: {} of {} probes{} recorded{}\n", o.out_dir, finished, plan.size(),
                       slice, recorded.torn ? " (the journal's last line was cut short: that probe runs again)" : "");
  }
  err << fmt::format("probing {} op x dtype pairs{} on {} with {} worker{}\n", to_run, resuming ? "" : slice, where,
                     jobs, jobs == 1 ? "" : "s");

  Progress progress(err, to_run, o.progress && to_run > 0, isatty(STDERR_FILENO), where);
  size_t ran = 0;
  bool env_written = false, host_described = false;
  int stopped_by = 0;
  std::optional<Pool> pool;  // its workers are reaped when it goes, after the reports (Note [Workers at the end])
  {
    pool.emplace(o, target, log_path, plan, spec, recordings ? recordings->summary().path : "none",
                 std::move(expected));
    stopped_by = pool->run(
        std::move(groups), jobs,
        [&](const RunEnvironment& e) {
          env.device = e.device;
          env.emulator = e.emulator;
          env.torch_version = e.torch_version;
          take_host_block(env, e);
          host_described = true;
          if (!env_written) journal.line({{"environment", to_json(env)}});
          env_written = true;
        },
        [&](size_t i, ProbeResult& r) {
          if (const RegistryEntry* e = statuses.find(r.op)) r.registry_status = std::string(to_string(e->status));
          r.basis = target == "mps-emu" ? kBasisRegistry : kBasisKernel;
          if (expecting.expectations) {
            emu::apply_expectations(r, *expecting.expectations, expecting.mode, expecting.version);
          }
          journal.line(to_json(r));
          MPS_AUDIT_ASSERT(!done[i], "a second record of one probe");
          results[i] = r;
          done[i] = true;
          ++finished;
          ++ran;
          progress.update(ran, r);
        });
    if (!stopped_by && g_stop_signal) stopped_by = g_stop_signal;  // it came after the last result
    if (stopped_by && finished == plan.size()) stopped_by = 0;     // too late to lose anything
  }
  signals.reset();  // a signal while the reports are written ends the process; each report is whole or absent
  if (!host_described) {
    RunEnvironment host;
    describe_host(host);
    take_host_block(env, host);
  }

  Results doc;
  doc.environment = env;
  // Which release first had a native MPS kernel of each operator (the HTML report's "native since"), from the shipped
  // releases' registries. Read here, not beside the workers: the run starts no threads (Note [Forked workers]).
  if (target == "mps" || target == "mps-emu") {
    std::vector<std::string> ops;
    for (const auto& p : plan) {
      if (ops.empty() || ops.back() != p.op) ops.push_back(p.op);
    }
    std::map<std::string, const Registry*> loaded;
    if (target == "mps-emu" && !release_version.empty()) loaded[release_version] = &statuses;
    doc.timeline = emu::native_since(ops, loaded);
  }
  doc.run.planned = plan.size();
  doc.run.finished = finished;
  doc.run.shard = shard.to_string();
  if (stopped_by) doc.run.interrupted = signal_name(stopped_by);
  for (size_t i = 0; i < plan.size(); ++i) {
    if (done[i]) doc.records.push_back(std::move(results[i]));
  }
  MPS_AUDIT_ASSERT(stopped_by || doc.records.size() == plan.size(), "a planned probe without a record");
  RenderOptions render;
  render.strict = o.strict;
  write_reports(doc, o.formats, o.out_dir, render);
  write_file_atomically(costs_path, render_probe_costs(std::move(costs), doc.records));
  out << render_summary(doc);
  // Accounting: every planned probe has exactly one record or is not run (interrupted); none is ever lost.
  out << fmt::format("probes: {} planned, {} finished, {} not run, 0 lost\n", doc.run.planned, doc.run.finished,
                     doc.run.not_run());
  out << fmt::format("reports in {}/ ({})\n", o.out_dir, fmt::join(o.formats, ", "));
  if (stopped_by) {
    if (o.progress && isatty(STDERR_FILENO)) err << "\n";
    err << fmt::format(
        "stopped by {}: {} of {} probes finished, {} not run; the reports say so. 'mps-audit run --resume' with the "
        "same flags runs the rest\n",
        signal_name(stopped_by), finished, plan.size(), plan.size() - finished);
    return 128 + stopped_by;
  }
  int exit_code = kExitOk;
  if (baseline) exit_code = apply_baseline_gate(doc, *baseline, o.out_dir, out);
  for (const auto& r : doc.records) {
    if (std::find(fail_on.begin(), fail_on.end(), r.verdict) != fail_on.end()) return kExitGateFailed;
  }
  return exit_code;
}

namespace {

// A line of a worker's work (Note [Worker protocol]).
struct WorkLine {
  long index = -1;
  std::string op, dtype;
  bool joins = false;  // it may join the turn of the line before it
};

std::optional<WorkLine> parse_work_line(const std::string& line) {
  const std::vector<std::string> fields = split_list(line, '\t');
  if (fields.size() < 3) return std::nullopt;
  return WorkLine{std::atol(fields[0].c_str()), fields[1], fields[2], fields.size() > 3 && fields[3] == "+"};
}

}  // namespace

std::optional<std::string> device_unusable(const c10::Device& device) {
  if (device.is_cpu() || device.is_meta()) return std::nullopt;
  try {
    at::ones({1}, at::TensorOptions().device(device)).add(1).cpu();
  } catch (const std::exception& e) {
    return error_text(e);
  }
  return std::nullopt;
}

// A current stream with nothing left to run has run all of the probe's work; once a kernel has faulted, every later
// CUDA call of the process reports it, this question included. A stream still busy, an error or another device
// leave it to device_unusable().
bool known_usable(const c10::Device& device) {
  if (!device.is_cuda()) return false;
  try {
    return c10::impl::getDeviceGuardImpl(device.type())->getStream(device).query();
  } catch (const std::exception&) {
    return false;
  }
}

int run_worker(const WorkerOptions& o, std::ostream& out) {
#ifdef __linux__
  // Die with the parent, however it dies. Asked for after the exec, so check that the parent did not die before.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (o.parent > 0 && ::getppid() != static_cast<pid_t>(o.parent)) return kExitOk;
  if (o.lifeline >= 0) watch_lifeline(o.lifeline);  // from here on, the parent's end closing ends this process
  std::atomic<int64_t>* on_target = o.state >= 0 ? map_shared_word(o.state) : nullptr;
  if (o.state >= 0 && !on_target) throw UserError(fmt::format("cannot map --state {}", o.state));
  // Failed synthesis attempts throw, and libtorch's own fetcher makes every throw expensive (see the function's
  // comment). MPS_AUDIT_TORCH_BACKTRACES=1 keeps it, to measure what that costs.
  if (!std::getenv("MPS_AUDIT_TORCH_BACKTRACES")) compat::install_cheap_stack_trace_fetcher();
  // Note [One thread per worker]
  // The run has a worker per core, so each worker computes on one thread. libtorch would otherwise give each worker
  // a pool of threads as large as the machine for its CPU kernels: on 16 cores, 16 workers with 16 threads each,
  // whose idle threads spin after every parallel region and take the cores the other workers need (the default
  // audit on CUDA spent over twice as much CPU time as its probes took). The inputs are small, so a CPU kernel
  // rarely splits its work at all.
  at::set_num_threads(1);
  RunEnvironment env;
  // The host block of the run's reports (Note [Forked workers]), described before the emulator is active, as the
  // run itself would: describe_host() takes an active emulator's MPS kernels for no MPS backend.
  describe_host(env);
  if (o.target == "mps-emu") {
    const emu::EmulatorOptions emu_options{o.emu_release, o.emu_macos};
    env.emulator = emu::activate_mps_emulator(emu_options).label();
  }
  ProbeTarget target;
  target.name = o.target;
  target.device = device_for(o.target);
  target.torch_version = compat::kTorchVersion;
  // Turns on CUDA (Note [Probes in one turn]); MPS_AUDIT_IN_TURNS=1 or 0 sets them on any target, to compare.
  const char* in_turns = std::getenv("MPS_AUDIT_IN_TURNS");
  target.in_turns = in_turns && *in_turns ? std::string(in_turns) == "1" : target.device.is_cuda();
  if (o.target == "mps-emu") target.macos_major = o.emu_macos;
  if (o.target == "mps") target.macos_major = macos_major_version();
  env.device = target.device.str();
  // Everything a probe needs is ready before the worker says so (Note [Spare workers]): the recorded samples, read
  // on a thread of their own meanwhile, the spec, and the device, which a first tiny operation sets up (seconds on a
  // GPU). A device that fails that operation is left to the probes, which say how.
  set_recordings_choice(o.samples);  // a forked worker's are the run's, loaded already (Note [Forked workers])
  std::exception_ptr recordings_error;
  std::thread preload([&] {
    try {
      process_recordings();
    } catch (...) {
      recordings_error = std::current_exception();
    }
  });
  std::optional<Spec> loaded;
  try {
    if (!o.run_spec) loaded.emplace(load_spec(o.spec, aten_ops()));
    if (auto broken = device_unusable(target.device))
      std::cerr << "the device failed its first operation: " << *broken << "\n";
  } catch (...) {
    preload.join();
    throw;
  }
  preload.join();
  if (recordings_error) std::rethrow_exception(recordings_error);
  const Spec& spec = o.run_spec ? *o.run_spec : *loaded;
  out << "env " << to_json(env).dump() << "\n" << std::flush;
  LineReader work(STDIN_FILENO);
  std::deque<WorkLine> held;  // handed out, not run yet
  bool caught_any = false;    // one probe at a time after a caught fault (Note [Probes after a caught fault])
  for (;;) {
    while (held.empty()) {
      const std::optional<std::string> next = work.next();
      if (!next) std::_Exit(kExitOk);  // the parent is done with us (static destructors may be slow or unsafe)
      if (auto line = parse_work_line(*next)) held.push_back(*line);
    }
    // The probes that join this one's turn (Note [Probes in one turn]), as far as they are here already.
    while (target.in_turns && !caught_any) {
      std::optional<WorkLine> joining;
      const auto joins = [&](const std::string& text) {
        joining = parse_work_line(text);
        return joining && joining->joins;
      };
      if (!work.next_here(joins)) break;
      held.push_back(*joining);
    }
    const size_t count = target.in_turns && !caught_any ? held.size() : 1;
    std::vector<ProbeRequest> requests;
    for (size_t k = 0; k < count; ++k) requests.push_back({held[k].op, held[k].dtype});
    const size_t caught_before = faults_caught();
    const std::vector<ProbeResult> results = probe_ops(target, spec, requests, [&](size_t k, ProbeStage stage) {
      if (on_target) on_target->store(stage_word(held[k].index, stage), std::memory_order_relaxed);
    });
    const bool caught = faults_caught() != caught_before;
    caught_any = caught_any || caught;
    // Note [Unusable device]
    // Some device errors are sticky: after an illegal memory access, every later CUDA call of the process fails with
    // the same error, so every later probe of this worker would report it. The error may also surface only at the
    // next synchronisation when the probe threw first. So after a probe that failed, a tiny operation on the device
    // checks that it still works; when it does not, the probe's record says so and the worker retires. On CUDA a
    // stream that has run everything queued on it, without an error, says so without the check's own turn on the GPU
    // (known_usable()): most failed probes were refused before anything ran on the device, and the default audit has
    // about 1,800 failed probes. After a turn of several probes, it cannot say which of them broke the device: those
    // that failed run again, each alone (Note [Turns that fail]).
    const auto failed = [](const ProbeResult& r) {
      return r.verdict != Verdict::kPass && r.verdict != Verdict::kFallback && r.verdict != Verdict::kSkip;
    };
    std::optional<std::string> broken;
    if (std::any_of(results.begin(), results.end(), failed) && !known_usable(target.device)) {
      broken = device_unusable(target.device);
    }
    if (broken) out << "retire\n";
    for (size_t k = 0; k < results.size(); ++k) {
      if (broken && results.size() > 1 && failed(results[k])) {
        out << "again " << held[k].index << "\n";
        continue;
      }
      ProbeResult checked = results[k];
      if (broken && failed(checked)) {
        checked.message += fmt::format(" (and the device was unusable after it: {})", *broken);
      }
      if (caught && !broken && k + 1 == results.size()) out << "finish\n";
      out << "result " << held[k].index << " " << to_json(checked).dump() << "\n";
    }
    out << std::flush;
    if (broken) std::_Exit(kExitOk);  // with the device broken, releasing its memory could abort
    held.erase(held.begin(), held.begin() + static_cast<long>(results.size()));
  }
}

}  // namespace mps_audit
