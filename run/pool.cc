// The pool of worker processes: see pool.h, and Note [Worker protocol] in run/worker_protocol.cc. Which worker gets
// which probes is for the Scheduler (run/scheduler.cc) to say; the pool owns the processes and does what it says.
#include "run/pool.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/diagnostics.h"
#include "common/output_file.h"
#include "common/text.h"
#include "run/child_process.h"
#include "run/scheduler.h"
#include "run/stop_signals.h"
#include "run/worker_protocol.h"

namespace mps_audit {
namespace {

// A worker's process, as the pool holds it; the work it holds is the scheduler's, in the slot of the same index.
struct Worker {
  pid_t pid = -1;
  int out_fd = -1;       // its standard output, read by the parent
  int in_fd = -1;        // its standard input, written by the parent; closed: the worker exits
  int lifeline_fd = -1;  // the write end of its lifeline, never written; closed (or the parent gone): it exits
  std::string buffer;
  bool said_anything = false;                     // for telling a worker that could not start from one that crashed
  long seen = -1;                                 // the last probe sent ahead it was seen to begin, or -1
  std::shared_ptr<SharedWord> state;              // where the worker is: a probe and its stage (Note [Worker protocol])
  std::chrono::steady_clock::time_point started;  // when its current probe began: its time limit runs from then
  std::chrono::steady_clock::time_point forked;   // when it was started (Note [Starts that pay] in run/scheduler.cc)
  // It exited (its output closed), and the record of its probe waits for its exit status (Note [Workers that end]).
  bool ending = false;
  bool alive() const { return pid > 0; }
};

}  // namespace

// Note [Half the workers first]
// A GPU sets CUDA contexts up side by side but no faster for it: workers starting at once are all ready only when
// the last context is. So on CUDA half the workers start first and begin probing the sooner, and the others once one
// of them is ready. Elsewhere a worker's start is a fork, and every worker starts at once. (Measured: docs/
// benchmarks.md, "2026-11-24 (fifth sitting)".)
size_t workers_started_first(const c10::Device& device, size_t jobs) {
  return device.is_cuda() ? std::max<size_t>(1, jobs / 2) : jobs;
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
    scheduler_.emplace(plan_, expected_, jobs);
    for (auto& group : groups) scheduler_->push_pending(std::move(group), /*front=*/false);
    // A fixed number of slots, so that references to them stay valid; the spares' slots start empty.
    workers_.assign(scheduler_->slots(), Worker{});
    const size_t first = workers_started_first(launch_.worker.target.device(), jobs);
    for (size_t k = 0; k < first; ++k) start(k);
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
      for (size_t slot = 0; slot < workers_.size(); ++slot) dispatch(slot);
      replenish();
      // Note [Workers at the end]
      // Once every probe has its record, the inputs of the ready workers left are closed (dispatch() did that) and
      // they exit; the run goes on to its reports without waiting for them, and they are reaped when the pool goes,
      // after the reports. A process with a CUDA context takes a second or more to end (the driver tears the context
      // down, one process after another), and the workers of a run end together. Workers still starting (spares,
      // replacements) are stopped now: they would otherwise set up their device (seconds on a GPU) meanwhile.
      if (scheduler_->done()) {
        for (size_t slot = 0; slot < workers_.size(); ++slot) {
          Worker& w = workers_[slot];
          if (w.alive() && !scheduler_->ready(slot) && !w.ending) kill_and_let_go(slot);
        }
        return 0;
      }
      std::vector<pollfd> fds;
      std::vector<size_t> owners;
      for (size_t slot = 0; slot < workers_.size(); ++slot) {
        if (workers_[slot].out_fd >= 0) {
          fds.push_back({workers_[slot].out_fd, POLLIN, 0});
          owners.push_back(slot);
        }
      }
      const bool waiting = std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.ending; });
      if (fds.empty() && !waiting) return 0;
      ::poll(fds.data(), fds.size(), waiting ? 5 : 200);
      reap_exited(record);
      if (stop_signal()) continue;
      const auto now = std::chrono::steady_clock::now();
      for (size_t k = 0; k < fds.size(); ++k) {
        const size_t slot = owners[k];
        Worker& w = workers_[slot];
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          char chunk[65536];
          const ssize_t n = ::read(w.out_fd, chunk, sizeof chunk);
          if (n > 0) {
            w.buffer.append(chunk, static_cast<size_t>(n));
            size_t nl;
            while ((nl = w.buffer.find('\n')) != std::string::npos) {
              handle_line(slot, w.buffer.substr(0, nl), on_env, record);
              w.buffer.erase(0, nl + 1);
            }
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          ended(slot, record);  // end of output: the worker exited
          continue;
        }
        if (scheduler_->current(slot) >= 0) note_progress(slot, now);
        if (scheduler_->current(slot) >= 0 && std::chrono::duration<double>(now - w.started).count() > timeout_s_) {
          const bool finishing = scheduler_->finishing(slot);
          const StageMark at = blame(slot);
          kill_and_let_go(slot);
          lost(slot, at, finishing, ProbeLoss::timeout(timeout_s_), record);
        }
      }
    }
  }

 private:
  // Starts the workers the scheduler asks for, in the first free slots (Note [Spare workers] in run/scheduler.cc).
  void replenish() {
    size_t starts = scheduler_->starts_wanted();
    for (size_t slot = 0; slot < workers_.size() && starts > 0; ++slot) {
      if (workers_[slot].alive()) continue;
      start(slot);
      --starts;
    }
  }

  // Writes a ready worker what the scheduler has for it (an overload's probes, and the next one ahead: Note [Probes
  // sent ahead] in run/scheduler.cc), or closes its input when it has nothing more (it then exits).
  void dispatch(size_t slot) {
    for (;;) {
      const Scheduler::Work work = scheduler_->next_work(slot);
      if (work.action == Scheduler::Work::Action::kLetGo) {
        let_go(slot);
        return;
      }
      if (work.action != Scheduler::Work::Action::kSend) return;
      send(slot, work);
      if (work.begins) workers_[slot].started = std::chrono::steady_clock::now();
    }
  }

  // Writes the probes to the worker's input, with one write: the first line begins a turn, and those that join it
  // say so ("\t+"; Note [Probes in one turn] in probe/probe_op.cc).
  void send(size_t slot, const Scheduler::Work& work) {
    Worker& w = workers_[slot];
    std::string text;
    for (size_t k = 0; k < work.probes.size(); ++k) {
      const size_t i = work.probes[k];
      text += work_line(i, plan_[i].op, plan_[i].dtype, k > 0 && work.joins[k]);
    }
    // A worker that died meanwhile shows as the end of its output.
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(w.in_fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(w.in_fd);
        w.in_fd = -1;
        scheduler_->input_closed(slot);
        return;
      }
      done += static_cast<size_t>(n);
    }
  }

  // One handler per reply (Note [Worker protocol]). A worker answers its probes in order: a result or an "again" is
  // its current probe's.
  template <typename E, typename R>
  void handle_line(size_t slot, const std::string& line, E& on_env, R& record) {
    workers_[slot].said_anything = true;
    std::visit([&](const auto& reply) { on_reply(slot, reply, on_env, record); }, parse_reply(line));
  }

  template <typename E, typename R>
  void on_reply(size_t slot, const EnvReply& reply, E& on_env, R&) {
    on_env(reply.env);
    const auto since = std::chrono::steady_clock::now() - workers_[slot].forked;
    scheduler_->worker_ready(slot, std::chrono::duration<double>(since).count());
  }
  template <typename E, typename R>
  void on_reply(size_t slot, const RetireReply&, E&, R&) {
    scheduler_->worker_retires(slot);
  }
  template <typename E, typename R>
  void on_reply(size_t slot, const FinishReply&, E&, R&) {
    scheduler_->worker_finishes(slot);
  }
  template <typename E, typename R>
  void on_reply(size_t slot, const ResultReply& reply, E&, R& record) {
    if (scheduler_->current(slot) < 0) return;
    const size_t i = scheduler_->result(slot);
    workers_[slot].started = std::chrono::steady_clock::now();
    record(i, reply.result);
  }
  template <typename E, typename R>
  void on_reply(size_t slot, const AgainReply&, E&, R&) {
    if (scheduler_->current(slot) < 0) return;
    scheduler_->again(slot);  // Note [Turns that fail]
    workers_[slot].started = std::chrono::steady_clock::now();
  }
  // A result that cannot be read is its probe's record, an error; an environment stops the run; anything else (a
  // worker's stray output) is let be.
  template <typename E, typename R>
  void on_reply(size_t slot, const MalformedReply& reply, E& on_env, R& record) {
    if (reply.meant == MalformedReply::Meant::kEnv) throw UserError(reply.error);
    if (reply.meant != MalformedReply::Meant::kResult) return;
    ResultReply unreadable{scheduler_->current(slot), {}};
    unreadable.result.verdict = Verdict::kError;
    unreadable.result.message = reply.error;
    on_reply(slot, unreadable, on_env, record);
  }

  template <typename R>
  void ended(size_t slot, R& record) {
    Worker& w = workers_[slot];
    close_fd(w.in_fd);
    close_fd(w.out_fd);
    scheduler_->input_closed(slot);
    w.ending = true;
    if (const std::optional<ChildEnd> end = reap_if_ended(w.pid)) settle(slot, *end, record);
  }

  // What the exit of a worker means for its probes, once its wait status is known.
  template <typename R>
  void settle(size_t slot, const ChildEnd& end, R& record) {
    Worker& w = workers_[slot];
    const bool retired = scheduler_->retiring(slot), finishing = scheduler_->finishing(slot);
    w.pid = -1;
    release(slot);
    if (scheduler_->current(slot) < 0 && !w.said_anything && !(end.exited() && end.exit_code == 0)) {
      throw UserError(fmt::format("a worker could not start: {}", last_log_line()));
    }
    // It retired after its last result: what it was sent after that goes back to the queue.
    if (retired) {
      scheduler_->requeue_rest(slot);
      return;
    }
    // Ended between two probes: we closed its input, or someone else killed it; then the rest of its operator goes
    // back to the queue, for another worker.
    if (scheduler_->current(slot) < 0) {
      scheduler_->give_back(slot);
      return;
    }
    lost(slot, blame(slot), finishing, ProbeLoss::ended(end), record);
  }

  // The worker lost the probe it was in, at `at` (blame()): that probe gets the record lost_probe_record() gives it,
  // if any (none: it runs again; Note [Probes after a caught fault], [Turns that fail]), and what the worker held
  // besides goes back to the queue. `finishing`: the worker had said "finish", asked before its slot was freed.
  template <typename R>
  void lost(size_t slot, const StageMark& at, bool finishing, const ProbeLoss& loss, R& record) {
    if (std::optional<ProbeResult> r = lost_probe_record(loss, at.stage, finishing)) {
      record(scheduler_->take_out(slot, at.probe), *r);
    }
    scheduler_->requeue_rest(slot);
  }

  // Note [Probes after a caught fault]
  // A worker that caught a fault (Note [Caught faults]) goes on with the rest of that operator, one probe at a time,
  // in a process the fault may have left in an unknown state: a lock its abandoned frames held, say. So when it hangs
  // or dies there, the probe is not recorded: it goes back to the front of the queue and runs again in a new worker,
  // whose verdict is the record (a probe that hangs anywhere costs the time limit twice). The same holds on emulated
  // MPS: a caught fault leaves the emulated device as it was, but the frames it abandoned are the CPU's there too
  // (Note [Caught faults]).

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
  StageMark blame(size_t slot) const {
    const StageMark m = read_mark(workers_[slot].state->word().load());
    const long current = scheduler_->current(slot);
    if (m.probe >= 0 && (m.probe == current || scheduler_->sent_ahead(slot, m.probe))) return m;
    return {current, ProbeStage::kReference};
  }

  // A worker in a turn answers at its end: the time limit of a probe it was seen to begin runs from then.
  void note_progress(size_t slot, std::chrono::steady_clock::time_point now) {
    Worker& w = workers_[slot];
    const StageMark m = read_mark(w.state->word().load());
    if (m.probe >= 0 && m.probe != w.seen && scheduler_->sent_ahead(slot, m.probe)) {
      w.seen = m.probe;
      w.started = now;
    }
  }

  // Note [Workers that end]
  // A worker's output closes when it exits, but a process with a CUDA context is gone a tenth of a second or more
  // later (the driver tears the context down), and one that was killed as late. The pool does not wait for that
  // while it has work to hand out: a worker whose input it closes (nothing left for it, or the rest of its operator
  // done after a caught fault) or that it kills (a timeout) is let go at once, and its slot may start a new worker;
  // it is reaped once it is gone, looked for between reads. Only the record of a probe whose worker died waits for
  // the exit status, which says how it died; meanwhile the pool reads and hands out work as before. Workers still
  // going when the run ends are killed and reaped when the pool goes, after the reports (Note [Workers at the end]).

  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Closes what the pool holds of a worker; the slot is free once pid is -1. What the worker held of the work stays
  // with the scheduler until it goes back to the queue or has its record.
  void release(size_t slot) {
    Worker& w = workers_[slot];
    close_fd(w.in_fd);
    close_fd(w.out_fd);
    close_fd(w.lifeline_fd);
    w.buffer.clear();
    w.ending = false;
    scheduler_->remove_worker(slot);
  }

  // Stops reading from the worker and closes its input and its lifeline (it exits, if it was not killed); it is
  // reaped later.
  void let_go(size_t slot) {
    exiting_.push_back(workers_[slot].pid);
    workers_[slot].pid = -1;
    release(slot);
  }

  void kill_and_let_go(size_t slot) {
    ::kill(workers_[slot].pid, SIGKILL);
    let_go(slot);
  }

  // Settles workers that ended once they are gone, and reaps the workers let go that are gone.
  template <typename R>
  void reap_exited(R& record) {
    for (size_t slot = 0; slot < workers_.size(); ++slot) {
      if (!workers_[slot].ending) continue;
      if (const std::optional<ChildEnd> end = reap_if_ended(workers_[slot].pid)) settle(slot, *end, record);
    }
    exiting_.erase(
        std::remove_if(exiting_.begin(), exiting_.end(), [](pid_t pid) { return reap_if_ended(pid).has_value(); }),
        exiting_.end());
  }

  // Stops every worker now: its input closes and it is killed (a probe in progress has no record; at the end of a
  // run, none is in progress: Note [Workers at the end]), and reaped.
  void stop_all() {
    for (size_t slot = 0; slot < workers_.size(); ++slot) {
      if (workers_[slot].alive()) kill_and_let_go(slot);
    }
    for (pid_t pid : exiting_) kill_and_reap(pid);
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

  void start(size_t slot) {
    Worker& w = workers_[slot];
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
    w.seen = -1;
    w.said_anything = false;
    w.forked = std::chrono::steady_clock::now();
    scheduler_->add_worker(slot);
  }

  WorkerLaunch launch_;  // what each worker starts with
  const std::vector<PlannedProbe>& plan_;
  std::vector<double> expected_;        // each probe's expected seconds, by plan index
  double timeout_s_;                    // --timeout, per probe
  std::optional<Scheduler> scheduler_;  // who gets which probes, by slot; made by run()
  std::vector<Worker> workers_;         // by slot: --jobs, then the spares' (Note [Spare workers] in run/scheduler.cc)
  std::vector<pid_t> exiting_;          // let go, not yet reaped (Note [Workers that end])
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
