// The policy of the pool of workers: see scheduler.h; run/pool.cc applies it to processes.
#include "run/scheduler.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/diagnostics.h"

namespace mps_audit {

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
// at once for very little work, and the run waited for their contexts. The order of the work, and so every record,
// is the same; only which worker runs a probe can change. (Measured: docs/benchmarks.md, "2026-11-24 (fourth
// sitting)".)
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
// probes again, one at a time (Note [Turns that fail] in run/pool.cc), so such a probe broke the device twice, and
// each time every process on the GPU waited and a worker ended. So a probe whose figure is kAloneSeconds or more
// runs in a turn of its own: it joins none, and the probe after it begins a new one. (Measured: docs/benchmarks.md,
// "2026-11-24 (sixth sitting)".)
constexpr double kAloneSeconds = 0.05;

std::vector<bool> joins_turn(const std::vector<double>& expected) {
  std::vector<bool> joins(expected.size(), false);
  for (size_t k = 1; k < expected.size(); ++k) {
    joins[k] = expected[k] < kAloneSeconds && expected[k - 1] < kAloneSeconds;
  }
  return joins;
}

// Note [Spare workers]
// Starting a worker costs seconds on a GPU (libtorch and its CUDA libraries, the spec and the recordings, the
// device), and a worker that dies (a crash, a hang, a device left unusable) needs a new one. Once one has died,
// the pool keeps a quarter as many workers again as --jobs (at least one) started and idle: a dead worker's work
// goes to one that is ready, and the new start happens meanwhile. At most --jobs workers probe at once; the
// spares are told to exit when nothing is left to hand out. A run in which no worker dies starts no spare.
Scheduler::Scheduler(const std::vector<PlannedProbe>& plan, std::vector<double> expected, size_t jobs)
    : plan_(plan), expected_(std::move(expected)), jobs_(jobs), slots_(jobs + std::max<size_t>(1, jobs / 4)) {}

void Scheduler::push_pending(std::vector<size_t> group, bool front) {
  for (size_t i : group) pending_seconds_ += expected_[i];
  if (front) {
    pending_.push_front(std::move(group));
  } else {
    pending_.push_back(std::move(group));
  }
}

// A new worker holds nothing yet; a slot is only reused once what its last worker held went back to the queue.
void Scheduler::add_worker(size_t slot) {
  Slot& s = slots_[slot];
  s.alive = s.open = true;
  s.ready = s.retiring = s.finishing = false;
  s.current = s.last_sent = -1;
  s.ahead.clear();
}

void Scheduler::worker_ready(size_t slot, double start_seconds) {
  slots_[slot].ready = true;
  start_seconds_ += start_seconds;
  ++starts_seen_;
}

void Scheduler::worker_retires(size_t slot) {
  slots_[slot].retiring = true;
}

void Scheduler::worker_finishes(size_t slot) {
  slots_[slot].finishing = true;
  worker_died_ = true;  // as good as: a new worker will be needed
}

void Scheduler::input_closed(size_t slot) {
  slots_[slot].open = false;
}

// What the worker held stays: the pool gives it back (requeue_rest, give_back) or takes it out for a record.
void Scheduler::remove_worker(size_t slot) {
  Slot& s = slots_[slot];
  s.alive = s.ready = s.open = s.retiring = s.finishing = false;
}

// A worker without an operator takes the next one only while fewer than --jobs workers are busy; otherwise it waits.
// Note [Probes sent ahead]
// A worker is sent every dtype of the overload it begins at once, and while it holds no other, the next overload
// of its operator, so that it finds its next probes waiting when it is done instead of waiting for the parent to
// read its results and answer: a wake-up of another process per probe, which on an idle core of a virtual machine
// takes longer than a small probe itself; and so that a worker on CUDA has an overload's probes to run in one turn
// (Note [Probes in one turn] in probe/probe_op.cc). A probe sent ahead has not begun until the one before it has a
// result (or the worker was seen to begin it, in a turn): when the worker dies or retires first, it goes back to
// the queue.
Scheduler::Work Scheduler::next_work(size_t slot) {
  Slot& s = slots_[slot];
  if (!s.alive || !s.ready || !s.open || s.retiring) return {};
  if (s.current < 0) {
    if (s.todo.empty() && s.finishing) return Work::of(Work::Action::kLetGo);
    if (s.todo.empty() && !pending_.empty()) {
      if (working() >= jobs_) return Work::of(Work::Action::kWait);  // a spare, for now
      take_pending(s);
    }
    if (s.todo.empty() && working() < jobs_) take_an_overload(slot);
    if (s.todo.empty()) return Work::of(Work::Action::kLetGo);
    Work work = send_overload(s);
    begin_next(s);
    work.begins = true;
    return work;
  }
  if (!s.todo.empty() && plan_[static_cast<size_t>(s.last_sent)].op == plan_[static_cast<size_t>(s.current)].op) {
    return send_overload(s);
  }
  return {};
}

// Gives the first queued group to the worker, and no longer counts its expected seconds.
void Scheduler::take_pending(Slot& s) {
  for (size_t i : pending_.front()) pending_seconds_ -= expected_[i];
  s.todo.assign(pending_.front().begin(), pending_.front().end());
  pending_.pop_front();
}

// Note [Overloads for idle workers]
// When no operator is left to hand out, a worker without work takes the probes of one overload from the worker
// with the most probes left: the last overload in that worker's list, all its dtypes, and never the overload that
// worker is busy with. A worker's memory of an operator (the synthesis that worked, the first dtype the CPU took:
// probe/probe_op.cc) is kept by overload, so every probe still meets the same memory as in one worker; only
// kernels compiled at first use are compiled in both (on a GPU with empty kernel caches, the special_* functions
// compile one per dtype, and the run's end waited for one worker going through both of an operator's overloads).
void Scheduler::take_an_overload(size_t thief) {
  Slot* from = nullptr;
  size_t best = 0;
  for (size_t k = 0; k < slots_.size(); ++k) {
    Slot& s = slots_[k];
    if (k == thief || !s.alive || s.finishing || s.retiring || s.todo.empty()) continue;
    const std::string& last = plan_[s.todo.back()].op;
    size_t run = 0;
    for (auto it = s.todo.rbegin(); it != s.todo.rend() && plan_[*it].op == last; ++it) ++run;
    const bool own_overload =
        run == s.todo.size() && s.last_sent >= 0 && plan_[static_cast<size_t>(s.last_sent)].op == last;
    if (!own_overload && run > best) {
      best = run;
      from = &s;
    }
  }
  if (!from) return;
  Slot& to = slots_[thief];
  to.todo.assign(from->todo.end() - static_cast<long>(best), from->todo.end());
  from->todo.erase(from->todo.end() - static_cast<long>(best), from->todo.end());
}

// The probes of the next overload in the worker's list, after those sent before: the first begins a turn, and the
// others join it where their figures let them (Note [Probes in one turn] in probe/probe_op.cc).
Scheduler::Work Scheduler::send_overload(Slot& s) {
  Work work = Work::of(Work::Action::kSend);
  const std::string op = plan_[s.todo.front()].op;
  while (!s.todo.empty() && plan_[s.todo.front()].op == op) {
    work.probes.push_back(s.todo.front());
    s.todo.pop_front();
  }
  std::vector<double> expected;
  for (size_t i : work.probes) expected.push_back(expected_[i]);
  work.joins = joins_turn(expected);
  for (size_t i : work.probes) {
    s.ahead.push_back(i);
    s.last_sent = static_cast<long>(i);
  }
  return work;
}

// The probe sent after the current one, if any, becomes the current one.
void Scheduler::begin_next(Slot& s) {
  s.current = s.ahead.empty() ? -1 : static_cast<long>(s.ahead.front());
  if (!s.ahead.empty()) s.ahead.pop_front();
}

bool Scheduler::sent_ahead(size_t slot, long probe) const {
  const std::deque<size_t>& ahead = slots_[slot].ahead;
  return std::find(ahead.begin(), ahead.end(), probe) != ahead.end();
}

size_t Scheduler::result(size_t slot) {
  Slot& s = slots_[slot];
  MPS_AUDIT_ASSERT(s.current >= 0, "a result from a worker without a probe");
  const size_t i = static_cast<size_t>(s.current);
  begin_next(s);  // a worker that retires never begins it: it goes back to the queue when the worker has exited
  return i;
}

void Scheduler::again(size_t slot) {
  Slot& s = slots_[slot];
  MPS_AUDIT_ASSERT(s.current >= 0, "'again' from a worker without a probe");
  push_pending({static_cast<size_t>(s.current)}, /*front=*/true);
  begin_next(s);
}

size_t Scheduler::take_out(size_t slot, long probe) {
  Slot& s = slots_[slot];
  if (s.current == probe) {
    s.current = -1;
  } else {
    s.ahead.erase(std::remove(s.ahead.begin(), s.ahead.end(), static_cast<size_t>(probe)), s.ahead.end());
  }
  return static_cast<size_t>(probe);
}

// Note [Probes that end their worker]
// An operator whose probe killed its worker (a crash, a hang) or left its device unusable usually does so in every
// dtype, and each time a new worker has to start: load libtorch, read the spec, set up the device (seconds on a
// GPU). Its other probes go back to the front of the queue an overload at a time, for whichever workers come free
// first, so that those starts happen side by side instead of one after another in one worker. An overload's probes
// stay together: a worker's memory of an overload (probe/probe_op.cc) shapes its later dtypes' records, so each must
// meet the same memory whichever worker takes it (a dtype sent alone to a worker that had probed its overload's
// other dtypes got another record than in one that had not: which worker came free first decided it).
void Scheduler::requeue_rest(size_t slot) {
  Slot& s = slots_[slot];
  std::deque<size_t> rest = std::move(s.ahead);  // sent, without a record
  if (s.current >= 0) rest.push_front(static_cast<size_t>(s.current));
  rest.insert(rest.end(), s.todo.begin(), s.todo.end());
  std::vector<std::vector<size_t>> overloads;
  for (size_t i : rest) {
    if (overloads.empty() || plan_[overloads.back().front()].op != plan_[i].op) overloads.emplace_back();
    overloads.back().push_back(i);
  }
  for (auto it = overloads.rbegin(); it != overloads.rend(); ++it) push_pending(std::move(*it), /*front=*/true);
  s.current = -1;
  s.ahead.clear();
  s.todo.clear();
  worker_died_ = true;
}

void Scheduler::give_back(size_t slot) {
  Slot& s = slots_[slot];
  if (s.todo.empty()) return;
  push_pending({s.todo.begin(), s.todo.end()}, /*front=*/true);
  s.todo.clear();
}

// Workers start while there is work that no running worker holds: up to --jobs, and the spares once a worker has
// died; near the end of a run, only those that pay (Note [Starts that pay]).
size_t Scheduler::starts_wanted() const {
  if (pending_.empty()) return 0;
  size_t alive = 0;
  for (const Slot& s : slots_) alive += s.alive ? 1 : 0;
  // The others start once one is ready (Note [Half the workers first] in run/pool.cc).
  if (starts_seen_ == 0 && alive > 0) return 0;
  const size_t wanted = jobs_ + (worker_died_ ? slots_.size() - jobs_ : 0);
  if (alive >= wanted) return 0;
  const size_t room = wanted - alive;
  if (starts_seen_ == 0) return room;
  return starts_that_pay(pending_seconds_, able(), start_seconds_ / static_cast<double>(starts_seen_), room);
}

size_t Scheduler::working() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += busy(s) ? 1 : 0;
  return n;
}

size_t Scheduler::able() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.alive && s.open && !s.retiring && !s.finishing ? 1 : 0;
  return n;
}

}  // namespace mps_audit
