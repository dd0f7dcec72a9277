// Starting and watching a child process: see child_process.h.
//
// Note [Child processes]
// Three things run in a child process so that a crash or a hang there costs the tool nothing but a record: a run's
// workers (Note [Worker protocol] in run/worker_protocol.cc), a model audit (Note [Model audit in a child process]
// in model/audit_process.cc) and the isolation benchmark's worker. They share this layer:
// - Start. A fork (fork_child) keeps what the parent has loaded and parsed, and runs a function; a spawn
//   (spawn_child) runs the binary again, where a fork cannot be used (Note [Forked workers] in
//   run/worker_process.cc). Either way the child gets its descriptors by number, and may get its own process group
//   and default signal dispositions, and variables of its environment replaced.
// - Shared memory (SharedBlock): a file, unlinked at once, mapped by the parent; a forked child shares the mapping,
//   a spawned one maps the descriptor it inherits. The child writes where it is; when the child dies, the parent
//   reads there what it was doing.
// - Dying with the parent. On Linux the child asks the kernel to kill it when its parent dies (PR_SET_PDEATHSIG),
//   and then checks that the parent did not die before it asked. A child that must also end on macOS holds the read
//   end of a lifeline, a pipe whose write end only the parent holds: it closes when the parent dies.
// - The end. wait_for_child() waits, and with a time limit kills a child that makes no progress for that long;
//   ChildEnd says how it ended: an exit status, the signal that killed it, or the time limit.
#include "run/child_process.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "common/diagnostics.h"
#include "run/stop_signals.h"

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

// The variable an environment entry ("NAME=value") sets.
std::string variable_name(const char* entry) {
  const char* equals = std::strchr(entry, '=');
  return equals ? std::string(entry, equals) : std::string(entry);
}

// The parent's environment without the variables `setup` unsets or sets, then those it sets.
std::vector<std::string> child_environment(const ChildSetup& setup) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    const std::string name = variable_name(*e);
    const bool removed =
        std::find(setup.unset.begin(), setup.unset.end(), name) != setup.unset.end() ||
        std::any_of(setup.variables.begin(), setup.variables.end(), [&](const auto& v) { return v.first == name; });
    if (!removed) entries.emplace_back(*e);
  }
  for (const auto& [name, value] : setup.variables) entries.push_back(name + "=" + value);
  return entries;
}

// In a forked child: the setup that a spawn's attributes and file actions do; false when a descriptor failed.
bool set_up_forked_child(const ChildSetup& setup) {
  if (setup.own_group) {
    ::setpgid(0, 0);
    struct sigaction default_action;
    std::memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    for (int s : {SIGPIPE, SIGINT, SIGTERM}) ::sigaction(s, &default_action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  }
  int highest = 2;
  for (const ChildDescriptor& d : setup.descriptors) {
    int from = d.from;
    if (!d.append_to.empty()) from = ::open(d.append_to.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (from < 0 || ::dup2(from, d.number) < 0) return false;
    if (!d.append_to.empty() && from != d.number) ::close(from);
    highest = std::max(highest, d.number);
  }
  if (setup.close_others) close_descriptors_from(highest + 1);
  for (const std::string& name : setup.unset) ::unsetenv(name.c_str());
  for (const auto& [name, value] : setup.variables) ::setenv(name.c_str(), value.c_str(), 1);
  return true;
}

}  // namespace

bool children_forked() {
#ifdef __linux__
  const char* how = std::getenv("MPS_AUDIT_WORKERS");
  return !(how && std::string(how) == "exec");
#else
  return false;
#endif
}

int fork_child(const ChildSetup& setup, const std::function<int()>& body, pid_t& pid) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) return errno;
  if (child > 0) {
    pid = child;
    return 0;
  }
  if (setup.die_with_parent && !die_with_parent(parent)) std::_Exit(kExitBadInput);
  if (!set_up_forked_child(setup)) std::_Exit(kExitBadInput);
  int status = kExitBadInput;
  try {
    status = body();
  } catch (...) {
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

int spawn_child(const std::string& program, const std::vector<std::string>& argv, const ChildSetup& setup, pid_t& pid) {
  std::vector<std::string> words = argv, env_strings = child_environment(setup);
  std::vector<char*> args, envp;
  for (auto& s : words) args.push_back(s.data());
  args.push_back(nullptr);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const ChildDescriptor& d : setup.descriptors) {
    if (d.append_to.empty()) {
      posix_spawn_file_actions_adddup2(&actions, d.from, d.number);
    } else {
      posix_spawn_file_actions_addopen(&actions, d.number, d.append_to.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    }
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (setup.own_group) {
    sigset_t defaults, none;
    sigemptyset(&defaults);
    for (int s : {SIGPIPE, SIGINT, SIGTERM}) sigaddset(&defaults, s);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  const int rc =
      ::posix_spawn(&pid, program.c_str(), &actions, setup.own_group ? &attr : nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc;
}

bool die_with_parent(pid_t parent) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  return parent <= 0 || ::getppid() == parent;
}

void watch_lifeline(int fd) {
  std::thread([fd] {
    char c;
    while (::read(fd, &c, 1) < 0 && errno == EINTR) {
    }
    std::_Exit(kExitOk);  // the parent is gone
  }).detach();
}

ChildEnd ChildEnd::from_wait_status(int status) {
  ChildEnd end;
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  return end;
}

std::string ChildEnd::describe() const {
  if (timed_out) return "timed out";
  if (signal != 0) return "killed by " + signal_name(signal);
  return fmt::format("exited with status {}", exit_code);
}

std::optional<ChildEnd> reap_if_ended(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == pid) return ChildEnd::from_wait_status(status);
  if (r < 0 && errno != EINTR) return ChildEnd{};
  return std::nullopt;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

ChildEnd wait_for_child(pid_t pid, double timeout_s, const std::function<bool()>& progressed) {
  int status = 0;
  if (timeout_s <= 0) {
    for (;;) {
      const pid_t r = ::waitpid(pid, &status, 0);
      if (r == pid) return ChildEnd::from_wait_status(status);
      if (r < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
    }
  }
  const auto limit = std::chrono::duration<double>(timeout_s);
  auto since = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return ChildEnd::from_wait_status(status);
    if (r < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
    const auto now = std::chrono::steady_clock::now();
    if (progressed && progressed()) since = now;
    if (now - since > limit) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      ChildEnd end;
      end.timed_out = true;
      return end;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

SharedBlock::SharedBlock(size_t size, const std::string& file_prefix, const std::string& what) : size_(size) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + file_prefix + "-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw UserError(fmt::format("cannot create {}: {}", what, std::strerror(errno)), {path});
  ::unlink(path.c_str());
  fd_ = move_descriptor_above(fd, 10);
  if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    throw UserError(fmt::format("cannot create {}: {}", what, std::strerror(errno)), {path});
  }
  data_ = map_shared_block(fd_, size);
  if (!data_) throw UserError(fmt::format("cannot map {}: {}", what, std::strerror(errno)), {path});
}

SharedBlock::~SharedBlock() {
  ::munmap(data_, size_);
  ::close(fd_);
}

void* map_shared_block(int fd, size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

int move_descriptor_above(int fd, int lowest) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, lowest);
  ::close(fd);
  return moved;
}

void set_cloexec(int fd) {
  ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

}  // namespace mps_audit
