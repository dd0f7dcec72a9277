// Which worker of a run gets which probes, and when; what goes back to the queue when a worker ends; how many
// workers to start. A policy only: it holds no process, descriptor or clock, so that it can be tested with fake
// workers; run/pool.cc owns the processes and applies its decisions. See the Notes in run/scheduler.cc.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "run/plan.h"

namespace mps_audit {

// How many workers to start now, at most `room`, once starts have been seen to take `seconds_per_start` each: those
// for which `pending_seconds` of work not handed out, shared among the `able` workers that can take it and those
// started, is more than a start takes, and any that keep two able to take work (Note [Starts that pay] in
// run/scheduler.cc).
size_t starts_that_pay(double pending_seconds, size_t able, double seconds_per_start, size_t room);

// Which of an overload's probes, sent to a worker together with these figures (expected seconds), join the turn of
// the probe before them (Note [Probes in one turn] in probe/probe_op.cc): all but the first, except a probe expected
// to take long and the probe after it (Note [Slow probes alone] in run/scheduler.cc).
std::vector<bool> joins_turn(const std::vector<double>& expected);

// The scheduling state of a run's workers, by slot: --jobs slots, then the spares' (Note [Spare workers]). The pool
// tells it what its workers do (started, ready, said "retire" or "finish", its input closed, gone) and what they
// answer, and asks it what to send each ready worker.
class Scheduler {
 public:
  // `plan` must outlive the scheduler; `expected`: each probe's expected seconds, by plan index (Note [Starts that
  // pay]); `jobs`: how many workers may probe at once.
  Scheduler(const std::vector<PlannedProbe>& plan, std::vector<double> expected, size_t jobs);

  // How many slots the pool has: --jobs, then a quarter as many spares (at least one).
  size_t slots() const { return slots_.size(); }

  // Queues a group of probes to hand out (the plan indices of one operator, or probes given back): at the front (work
  // given back) or the back.
  void push_pending(std::vector<size_t> group, bool front);
  // The groups not handed out yet, in the order they go out.
  const std::deque<std::vector<size_t>>& pending() const { return pending_; }
  // Every probe has had its answer: none is queued, and no worker holds one.
  bool done() const { return pending_.empty() && working() == 0; }

  // What the pool tells it about the worker in a slot.
  void add_worker(size_t slot);                          // one started in the free slot
  void worker_ready(size_t slot, double start_seconds);  // it said "env", that long after it was started
  void worker_retires(size_t slot);                      // it said "retire": no more work
  void worker_finishes(size_t slot);                     // it said "finish": the rest of its operator only
  void input_closed(size_t slot);                        // its input is closed: no more work can reach it
  void remove_worker(size_t slot);                       // the slot is free: its worker exited or was let go

  // What to do with a worker now. kSend: write it `probes`, one overload's, in order; the pool asks again until the
  // answer is something else (the next overload may go ahead). kLetGo: nothing is left for it: the pool closes its
  // input (it exits) and frees the slot (remove_worker); kWait: it is a spare for now; kNone: it has what it needs,
  // or cannot take work.
  struct Work {
    enum class Action { kNone, kWait, kSend, kLetGo };
    Action action = Action::kNone;
    std::vector<size_t> probes;
    std::vector<bool> joins;  // whether each probe joins the turn of the one before it (Note [Slow probes alone])
    bool begins = false;      // the first probe begins now (the worker held none): its time limit runs from now
    static Work of(Action action) {
      Work work;
      work.action = action;
      return work;
    }
  };
  Work next_work(size_t slot);

  // The worker's current probe, or -1; whether `probe` was sent to it after the current one, not yet begun.
  long current(size_t slot) const { return slots_[slot].current; }
  bool sent_ahead(size_t slot, long probe) const;
  bool ready(size_t slot) const { return slots_[slot].ready; }
  bool retiring(size_t slot) const { return slots_[slot].retiring; }
  bool finishing(size_t slot) const { return slots_[slot].finishing; }

  // The current probe got its answer: returns it; the next one sent begins now.
  size_t result(size_t slot);
  // The current probe runs again, alone, in a worker of its own turn (Note [Turns that fail] in run/pool.cc); the
  // next one sent begins now.
  void again(size_t slot);
  // Takes `probe` (the current one, or one sent ahead) out of what the worker holds, for its record; returns it.
  size_t take_out(size_t slot, long probe);
  // The worker ended in a probe, or retired: what it holds goes back to the front of the queue, one probe a group,
  // in order (Note [Probes that end their worker]).
  void requeue_rest(size_t slot);
  // The worker ended between two probes: the rest of its operator goes back to the front of the queue, whole.
  void give_back(size_t slot);

  // How many workers to start now (Note [Spare workers], Note [Starts that pay]).
  size_t starts_wanted() const;
  // The workers that hold work; those that can take work (alive, starting or ready, and not on their way out).
  size_t working() const;
  size_t able() const;

 private:
  struct Slot {
    bool alive = false;        // a worker is in the slot
    bool ready = false;        // it said "env": it may get work
    bool open = false;         // its input is open
    bool retiring = false;     // it said "retire": it gets no more work and exits after its result
    bool finishing = false;    // it said "finish": it gets the rest of its operator only
    long current = -1;         // the probe it is working on (sent, not answered), or -1
    std::deque<size_t> ahead;  // those sent after it, in order, not answered (Note [Probes sent ahead])
    long last_sent = -1;       // the last probe sent to it (whose overload it is busy with)
    std::deque<size_t> todo;   // the rest of its operator's probes
  };

  bool busy(const Slot& s) const { return s.alive && (s.current >= 0 || !s.ahead.empty() || !s.todo.empty()); }
  void take_pending(Slot& s);
  void take_an_overload(size_t thief);
  Work send_overload(Slot& s);
  static void begin_next(Slot& s);

  const std::vector<PlannedProbe>& plan_;
  std::vector<double> expected_;
  size_t jobs_;
  std::vector<Slot> slots_;
  std::deque<std::vector<size_t>> pending_;
  double pending_seconds_ = 0;  // the expected seconds of pending_'s probes
  bool worker_died_ = false;    // from then on the spares start too (Note [Spare workers])
  double start_seconds_ = 0;    // from start to "env", over the starts_seen_ workers that got there
  size_t starts_seen_ = 0;
};

}  // namespace mps_audit
