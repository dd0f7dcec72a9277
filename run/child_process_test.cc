// Tests of the child-process layer (run/child_process.h) with real processes: a crash, a hang, a result in the
// shared block, and a child that must not outlive its parent.
#include "run/child_process.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mps_audit {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Whether `pid` is gone: reaped, or at least no longer a child of this process to reap.
bool gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

ChildEnd forked(const std::function<int()>& body, double timeout_s = 0, const std::function<bool()>& progressed = {}) {
  pid_t pid = -1;
  EXPECT_EQ(fork_child({}, body, pid), 0);
  return wait_for_child(pid, timeout_s, progressed);
}

TEST(ChildProcess, CrashIsNamedBySignal) {
  const ChildEnd segv = forked([] {
    std::raise(SIGSEGV);
    return 0;
  });
  EXPECT_FALSE(segv.exited());
  EXPECT_FALSE(segv.timed_out);
  EXPECT_EQ(segv.signal, SIGSEGV);
  EXPECT_EQ(segv.describe(), "killed by SIGSEGV");

  const ChildEnd abrt = forked([]() -> int { std::abort(); });
  EXPECT_EQ(abrt.signal, SIGABRT);
  EXPECT_EQ(abrt.describe(), "killed by SIGABRT");

  // A spawned program, likewise.
  pid_t pid = -1;
  ASSERT_EQ(spawn_child("/bin/sh", {"sh", "-c", "kill -BUS $$"}, {}, pid), 0);
  EXPECT_EQ(wait_for_child(pid, 30).describe(), "killed by SIGBUS");
}

TEST(ChildProcess, HangIsKilledAfterTheTimeout) {
  pid_t pid = -1;
  ASSERT_EQ(fork_child(
                {},
                [] {
                  std::this_thread::sleep_for(std::chrono::seconds(60));
                  return 0;
                },
                pid),
            0);
  const auto start = Clock::now();
  const ChildEnd end = wait_for_child(pid, 0.3);
  const double took = seconds_since(start);
  EXPECT_TRUE(end.timed_out);
  EXPECT_FALSE(end.exited());
  EXPECT_EQ(end.describe(), "timed out");
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 10);
  EXPECT_TRUE(gone(pid));  // killed and reaped
}

TEST(ChildProcess, ProgressRestartsTheTimeout) {
  // The child ticks every 50 ms for about two seconds, longer than the timeout but never that long without a tick.
  SharedBlock block(sizeof(std::atomic<int64_t>), "mps-audit-test", "a test's state file");
  auto* ticks = new (block.data()) std::atomic<int64_t>(0);
  int64_t seen = 0;
  const ChildEnd end = forked(
      [&] {
        for (int i = 0; i < 40; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          ticks->fetch_add(1);
        }
        return 0;
      },
      1.0,
      [&] {
        const int64_t now = ticks->load();
        const bool moved = now != seen;
        seen = now;
        return moved;
      });
  EXPECT_FALSE(end.timed_out);
  EXPECT_TRUE(end.exited());
  EXPECT_EQ(ticks->load(), 40);
}

TEST(ChildProcess, ExitsWithItsResultInTheSharedBlock) {
  SharedBlock block(64, "mps-audit-test", "a test's state file");
  char* shared = static_cast<char*>(block.data());
  const ChildEnd end = forked([&] {
    std::strcpy(shared, "forty-two");
    return 3;
  });
  EXPECT_TRUE(end.exited());
  EXPECT_EQ(end.exit_code, 3);
  EXPECT_EQ(end.describe(), "exited with status 3");
  EXPECT_STREQ(shared, "forty-two");

  // A spawned child gets the block by number and writes there, with a variable of its environment set for it.
  std::memset(shared, 0, block.size());
  ChildSetup setup;
  setup.descriptors = {{3, block.fd(), ""}};
  setup.variables = {{"MPS_AUDIT_TEST_ANSWER", "seven"}};
  pid_t pid = -1;
  ASSERT_EQ(spawn_child("/bin/sh", {"sh", "-c", "printf %s \"$MPS_AUDIT_TEST_ANSWER\" >&3; exit 0"}, setup, pid), 0);
  const ChildEnd spawned = wait_for_child(pid, 30);
  EXPECT_TRUE(spawned.exited());
  EXPECT_EQ(spawned.exit_code, 0);
  EXPECT_STREQ(shared, "seven");
}

// Starts a grandchild through the layer in an intermediate process, which then dies (and is reaped here). Returns
// the read end of a pipe that only the grandchild still holds open, from which the grandchild's pid was read: it
// reaches end of file once the grandchild is gone.
int orphan_a_grandchild(const ChildSetup& setup, const std::function<void()>& in_grandchild, pid_t& grandchild) {
  int alive[2], ready[2];
  EXPECT_EQ(::pipe(alive), 0);
  EXPECT_EQ(::pipe(ready), 0);
  const pid_t intermediate = ::fork();
  if (intermediate == 0) {
    ::close(alive[0]);
    pid_t pid = -1;
    const int rc = fork_child(
        setup,
        [&] {
          in_grandchild();
          const pid_t self = ::getpid();
          if (::write(alive[1], &self, sizeof self) != sizeof self) return 1;
          ::close(ready[1]);  // the intermediate may die now
          std::this_thread::sleep_for(std::chrono::seconds(60));
          return 0;
        },
        pid);
    ::close(ready[1]);
    char c;
    while (::read(ready[0], &c, 1) < 0 && errno == EINTR) {
    }
    std::_Exit(rc == 0 ? 0 : 1);
  }
  ::close(alive[1]);
  ::close(ready[1]);
  ::close(ready[0]);
  int status = 0;
  EXPECT_EQ(::waitpid(intermediate, &status, 0), intermediate);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  grandchild = -1;
  EXPECT_EQ(::read(alive[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  return alive[0];
}

// Whether the pipe reaches end of file within `seconds`.
bool closes_within(int fd, double seconds) {
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char c;
      if (::read(fd, &c, 1) == 0) return true;
    }
  }
  return false;
}

TEST(ChildProcess, DiesWithItsParent) {
#ifndef __linux__
  GTEST_SKIP() << "PR_SET_PDEATHSIG is Linux's; elsewhere a child watches a lifeline (next test)";
#endif
  ChildSetup setup;
  setup.die_with_parent = true;
  pid_t grandchild = -1;
  const int alive = orphan_a_grandchild(
      setup, [] {}, grandchild);
  ASSERT_GT(grandchild, 0);
  const bool died = closes_within(alive, 5);
  if (!died) ::kill(grandchild, SIGKILL);
  ::close(alive);
  EXPECT_TRUE(died) << "the grandchild outlived its parent";
}

TEST(ChildProcess, EndsWhenItsLifelineCloses) {
  int lifeline[2];
  ASSERT_EQ(::pipe(lifeline), 0);
  pid_t grandchild = -1;
  // The intermediate holds the write end; the grandchild keeps only the read end, and watches it.
  const int alive = orphan_a_grandchild(
      {},
      [&] {
        ::close(lifeline[1]);
        watch_lifeline(lifeline[0]);
      },
      grandchild);
  ::close(lifeline[0]);
  ::close(lifeline[1]);
  ASSERT_GT(grandchild, 0);
  const bool died = closes_within(alive, 5);
  if (!died) ::kill(grandchild, SIGKILL);
  ::close(alive);
  EXPECT_TRUE(died) << "the grandchild outlived its lifeline";
}

TEST(ChildProcess, ForkedChildGetsItsOwnGroupAndOnlyItsDescriptors) {
  int extra[2];
  ASSERT_EQ(::pipe(extra), 0);
  ChildSetup setup;
  setup.descriptors = {{0, extra[0], ""}};
  setup.own_group = true;
  setup.close_others = true;
  pid_t pid = -1;
  ASSERT_EQ(fork_child(
                setup,
                [&] {
                  const bool own_group = ::getpgrp() == ::getpid();
                  const bool closed = ::fcntl(extra[0], F_GETFD) < 0 && ::fcntl(extra[1], F_GETFD) < 0;
                  const bool given = ::fcntl(0, F_GETFD) >= 0;
                  return (own_group ? 0 : 1) + (closed ? 0 : 2) + (given ? 0 : 4);
                },
                pid),
            0);
  ::close(extra[0]);
  ::close(extra[1]);
  const ChildEnd end = wait_for_child(pid, 30);
  EXPECT_TRUE(end.exited());
  EXPECT_EQ(end.exit_code, 0) << "1: not its own group, 2: other descriptors open, 4: its own not given";
}

}  // namespace
}  // namespace mps_audit
