// Starting a worker's process: see worker_process.h.
#include "run/worker_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

#include "common/diagnostics.h"
#include "run/worker_main.h"
#include "run/worker_protocol.h"

extern char** environ;

namespace mps_audit {
namespace {

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
bool forked_workers() {
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
int fork_worker(const WorkerLaunch& how, int in, int out, int lifeline, int state, pid_t& worker) {
  WorkerOptions o;
  o.target = how.target;
  o.spec = how.spec;
  o.emu_release = how.emu_release;
  o.emu_macos = how.emu_macos;
  o.samples = how.samples;
  o.run_spec = how.run_spec;
  o.parent = ::getpid();
  o.lifeline = kLifelineFd;
  o.state = kStateFd;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid > 0) {
    worker = pid;
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
  const int log = ::open(how.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (::dup2(in, STDIN_FILENO) < 0 || ::dup2(out, STDOUT_FILENO) < 0 || log < 0 || ::dup2(log, STDERR_FILENO) < 0 ||
      ::dup2(lifeline, kLifelineFd) < 0 || ::dup2(state, kStateFd) < 0) {
    std::_Exit(kExitBadInput);
  }
  close_descriptors_from(kStateFd + 1);
  for (const auto& [name, value] : worker_variables(how.target, how.fallback, environ)) {
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
int spawn_worker(const WorkerLaunch& how, int in, int out, int lifeline, int state, pid_t& worker) {
  std::vector<std::string> words = {how.self,      "__worker",
                                    "--target",    how.target,
                                    "--spec",      how.spec,
                                    "--parent",    std::to_string(::getpid()),
                                    "--emu-macos", std::to_string(how.emu_macos)};
  if (!how.emu_release.empty()) {
    words.push_back("--emu-release");
    words.push_back(how.emu_release);
  }
  words.push_back("--samples");
  words.push_back(how.samples);
  words.push_back("--lifeline");
  words.push_back(std::to_string(kLifelineFd));
  words.push_back("--state");
  words.push_back(std::to_string(kStateFd));
  std::vector<char*> argv;
  for (auto& s : words) argv.push_back(s.data());
  argv.push_back(nullptr);
  const auto variables = worker_variables(how.target, how.fallback, environ);
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
  posix_spawn_file_actions_addopen(&actions, 2, how.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, lifeline, kLifelineFd);
  posix_spawn_file_actions_adddup2(&actions, state, kStateFd);
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
  const int rc = posix_spawn(&worker, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

}  // namespace

int above_worker_fds(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

void set_cloexec(int fd) {
  ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

SharedWord::SharedWord() {
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
SharedWord::~SharedWord() {
  ::munmap(word_, sizeof(int64_t));
  ::close(fd_);
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

}  // namespace mps_audit
