// The pool of worker processes: see pool.h, and Note [Worker protocol] in run/worker_protocol.cc.
#include "run/pool.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/text.h"
#include "run/stop_signals.h"
#include "run/worker_protocol.h"
#include "targets/targets.h"

namespace mps_audit {
namespace {

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

class PoolImpl {
 public:
  PoolImpl(WorkerLaunch launch, const std::vector<PlannedProbe>& plan, std::vector<double> expected, double timeout_s)
      : launch_(std::move(launch)), plan_(plan), expected_(std::move(expected)), timeout_s_(timeout_s) {}
  ~PoolImpl() { stop_all(); }
  PoolImpl(const PoolImpl&) = delete;
  PoolImpl& operator=(const PoolImpl&) = delete;

  // Runs the probes of `groups` (each the plan indices of one operator) on `jobs` workers; calls on_env with what the
  // first worker reports and on_result for each result, in arrival order. Returns the signal that stopped it, or 0.
  template <typename E, typename F>
  int run(std::vector<std::vector<size_t>> groups, size_t jobs, E&& on_env, F&& on_result) {
    for (auto& group : groups) push_pending(std::move(group), /*front=*/false);
    jobs_ = jobs;
    // A fixed number of slots, so that references to them stay valid; the spares' slots start empty.
    workers_.assign(jobs + std::max<size_t>(1, jobs / 4), Worker{});
    const size_t first = workers_started_first(device_for(launch_.target), jobs);
    for (size_t k = 0; k < first; ++k) start(workers_[k]);
    auto record = [&](size_t i, ProbeResult r) {
      r.op = plan_[i].op;
      r.dtype = plan_[i].dtype;
      on_result(i, r);
    };
    for (;;) {
      if (const int signal = stop_signal()) {
        stop_all();
        return signal;
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
      if (stop_signal()) continue;
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
        if (w.current >= 0 && std::chrono::duration<double>(now - w.started).count() > timeout_s_) {
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
          r.message = on_target ? fmt::format("no result after {:g} s; the worker was killed", timeout_s_)
                                : fmt::format("no reference: the CPU run did not finish in {:g} s", timeout_s_);
          r.seconds = timeout_s_;
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
      text += work_line(i, op, plan_[i].dtype, k > 0 && joins[k]);
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
      text = read_file(launch_.log_path);
    } catch (const UserError&) {
    }
    std::string last;
    for (const auto& line : split_list(text, '\n')) {
      if (!line.empty()) last = line;
    }
    return last.empty() ? "no message (see " + launch_.log_path + ")" : last;
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
    const int rc = start_worker_process(launch_, to_worker[0], from_worker[1], lifeline[0], w.state->fd(), w.pid);
    ::close(to_worker[0]);
    ::close(from_worker[1]);
    ::close(lifeline[0]);
    if (rc != 0) {
      ::close(to_worker[1]);
      ::close(from_worker[0]);
      ::close(lifeline[1]);
      w.pid = -1;
      throw UserError(fmt::format("cannot start a worker ({}): {}", launch_.self, std::strerror(rc)));
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

  WorkerLaunch launch_;  // what each worker starts with
  const std::vector<PlannedProbe>& plan_;
  std::deque<std::vector<size_t>> pending_;
  std::vector<Worker> workers_;  // --jobs slots, then the spares' (Note [Spare workers])
  std::vector<pid_t> exiting_;   // let go, not yet reaped (Note [Workers that end])
  size_t jobs_ = 0;
  bool worker_died_ = false;
  std::vector<double> expected_;  // each probe's expected seconds, by plan index (Note [Starts that pay])
  double timeout_s_;              // --timeout, per probe
  double pending_seconds_ = 0;    // the expected seconds of pending_'s probes
  double start_seconds_ = 0;      // from start to "env", over the starts_seen_ workers that got there
  size_t starts_seen_ = 0;
};

WorkerPool::WorkerPool(WorkerLaunch launch, const std::vector<PlannedProbe>& plan, std::vector<double> expected,
                       double timeout_s)
    : impl_(std::make_unique<PoolImpl>(std::move(launch), plan, std::move(expected), timeout_s)) {}

WorkerPool::~WorkerPool() = default;

int WorkerPool::run(std::vector<std::vector<size_t>> groups, size_t jobs,
                    const std::function<void(const RunEnvironment&)>& on_env,
                    const std::function<void(size_t, ProbeResult&)>& on_result) {
  return impl_->run(std::move(groups), jobs, on_env, on_result);
}

}  // namespace mps_audit
