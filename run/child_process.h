// The one layer for the child processes the tool starts and watches (a run's workers, a model audit's process, the
// isolation benchmark's worker): started by fork or spawn, memory shared with it, dying with its parent, waited for
// with a time limit, and how it ended. See Note [Child processes] in run/child_process.cc.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mps_audit {

// Whether children are forked (Linux, unless MPS_AUDIT_WORKERS=exec) rather than spawned from the binary (macOS,
// whose system frameworks do not survive a fork). See Note [Forked workers] in run/worker_process.cc.
bool children_forked();

// A descriptor the child gets by number: a copy of the parent's descriptor `from`, or else the file `append_to`,
// opened for appending (made if missing).
struct ChildDescriptor {
  int number = -1;
  int from = -1;
  std::string append_to;
};

// How a child starts, forked or spawned.
struct ChildSetup {
  // Set up in this order (give 0 to 2 first: a parent's descriptor may have a number the child gets later).
  std::vector<ChildDescriptor> descriptors;
  // Its own process group (a terminal's Ctrl-C is the parent's to handle), default dispositions of SIGPIPE, SIGINT
  // and SIGTERM (which the parent may ignore or catch), and no blocked signals.
  bool own_group = false;
  // Forked: closes every descriptor above the highest it gets (a spawned child keeps those without close-on-exec).
  bool close_others = false;
  // Forked: asks to be killed when the parent dies (die_with_parent()), and exits with status 2 at once if it is
  // gone already. A spawned child asks for itself, after the exec.
  bool die_with_parent = false;
  std::vector<std::string> unset;                              // removed from its environment
  std::vector<std::pair<std::string, std::string>> variables;  // set in its environment, after the parent's others
};

// Forks a child that runs `body` and exits with the status it returns (2 if it throws), this process's standard
// streams flushed before the fork and the child's after `body`. Returns 0 and sets `pid`, or an errno.
int fork_child(const ChildSetup& setup, const std::function<int()>& body, pid_t& pid);

// Spawns `program` with `argv` (argv[0] included). Returns 0 and sets `pid`, or an errno.
int spawn_child(const std::string& program, const std::vector<std::string>& argv, const ChildSetup& setup, pid_t& pid);

// In a child: asks the kernel to kill this process when its parent dies, however it dies (Linux; elsewhere the
// child relies on a lifeline, watch_lifeline()). Returns false when `parent` is no longer this process's parent: it
// died before the request was made.
bool die_with_parent(pid_t parent);

// In a child: ends this process (status 0) as soon as `fd`, the read end of a pipe whose write end only the parent
// holds and never writes, reaches end of file: the parent is gone. Watched on a thread of its own.
void watch_lifeline(int fd);

// How a child ended: exited with a status, was killed by a signal, or outlived its time limit and was killed.
struct ChildEnd {
  bool timed_out = false;
  int signal = 0;     // the signal that ended it; 0 when it exited or timed out
  int exit_code = 0;  // its exit status, when it exited
  static ChildEnd from_wait_status(int status);
  bool exited() const { return !timed_out && signal == 0; }
  // "exited with status 3", "killed by SIGSEGV", "timed out"
  std::string describe() const;
};

// Waits for the child `pid` to end and reaps it. With `timeout_s` > 0, kills it (SIGKILL) once that long has passed
// since it started or since `progressed` last returned true (polled every 10 ms: the child shows progress, say a new
// stage in its shared block), and says it timed out. Throws std::system_error when the child cannot be waited for.
ChildEnd wait_for_child(pid_t pid, double timeout_s = 0, const std::function<bool()>& progressed = {});

// Reaps the child `pid` if it has ended, without waiting: how it ended, or nullopt while it runs. A child that cannot
// be waited for (reaped already, not this process's) counts as ended, with a zero status.
std::optional<ChildEnd> reap_if_ended(pid_t pid);

// Kills the child `pid` (SIGKILL) and reaps it.
void kill_and_reap(pid_t pid);

// Memory shared with a child: `size` bytes, zeroed, of a file made in $TMPDIR (or /tmp) and unlinked at once. A
// forked child shares the mapping; a spawned one gets the descriptor (close-on-exec, above the numbers children get)
// by number and maps it with map_shared_block(). Throws UserError naming `what` ("a worker's state file").
class SharedBlock {
 public:
  SharedBlock(size_t size, const std::string& file_prefix, const std::string& what);
  ~SharedBlock();
  SharedBlock(const SharedBlock&) = delete;
  SharedBlock& operator=(const SharedBlock&) = delete;
  int fd() const { return fd_; }
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// In a spawned child: the shared block on descriptor `fd`, mapped; null when it cannot be.
void* map_shared_block(int fd, size_t size);

// A descriptor moved to the lowest free number at or above `lowest`, close-on-exec (the old one is closed): above
// the numbers a child gets, so that setting those up never meets it. Returns the new descriptor, or -1.
int move_descriptor_above(int fd, int lowest);
void set_cloexec(int fd);

}  // namespace mps_audit
