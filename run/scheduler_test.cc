// Tests of the pool's policy (run/scheduler.h) with fake workers: slots told they started, answered or ended, as the
// pool tells them, and no process.
#include "run/scheduler.h"

#include <deque>
#include <vector>

#include <gtest/gtest.h>

namespace mps_audit {
namespace {

using Action = Scheduler::Work::Action;
using Groups = std::deque<std::vector<size_t>>;
using Batches = std::vector<std::vector<size_t>>;

// Four operators, by overload and dtype, in plan order; each operator's plan indices are one group.
const std::vector<PlannedProbe> kPlan = {
    {"a.x", "f32"}, {"a.x", "f16"}, {"a.x", "i64"}, {"a.y", "f32"}, {"a.y", "f16"}, {"a.z", "f32"},  // 0-5
    {"b.x", "f32"}, {"b.x", "f16"}, {"b.y", "f32"}, {"b.y", "f16"}, {"b.y", "i64"},                  // 6-10
    {"c", "f32"},   {"c", "f16"},                                                                    // 11-12
    {"d.w", "f32"}, {"d.w", "f16"}, {"d.x", "f32"}, {"d.x", "f16"}, {"d.x", "i64"}, {"d.y", "f32"},  // 13-18
    {"d.z", "f32"}, {"d.z", "f16"},                                                                  // 19-20
};
const std::vector<size_t> kA = {0, 1, 2, 3, 4, 5}, kB = {6, 7, 8, 9, 10}, kC = {11, 12},
                          kD = {13, 14, 15, 16, 17, 18, 19, 20};

Scheduler make(size_t jobs, const std::vector<std::vector<size_t>>& groups, double seconds = 0.001) {
  Scheduler s(kPlan, std::vector<double>(kPlan.size(), seconds), jobs);
  for (const auto& g : groups) s.push_pending(g, /*front=*/false);
  return s;
}

// A worker started in the slot, and ready for work.
void start(Scheduler& s, size_t slot) {
  s.add_worker(slot);
  s.worker_ready(slot, 0.5);
}

// What the pool does with a worker in one pass: it writes each batch the scheduler sends, and asks again until the
// answer is something else.
struct Pass {
  Batches sent;
  std::vector<std::vector<bool>> joins;
  std::vector<bool> begins;
  Action then = Action::kNone;
};
Pass dispatch(Scheduler& s, size_t slot) {
  Pass pass;
  for (;;) {
    Scheduler::Work work = s.next_work(slot);
    if (work.action != Action::kSend) {
      pass.then = work.action;
      return pass;
    }
    pass.sent.push_back(work.probes);
    pass.joins.push_back(work.joins);
    pass.begins.push_back(work.begins);
  }
}

// The worker answers every probe it holds, one by one, and the pool hands it more after each answer (as long as it
// has a probe in hand: once it has none it would take a new operator); returns the probes answered, in order.
std::vector<size_t> answer_all(Scheduler& s, size_t slot) {
  std::vector<size_t> answered;
  while (s.current(slot) >= 0) {
    answered.push_back(s.result(slot));
    if (s.current(slot) >= 0) dispatch(s, slot);
  }
  return answered;
}

TEST(Scheduler, SlotsAreTheJobsAndAQuarterAsManySpares) {
  EXPECT_EQ(make(1, {}).slots(), 2u);
  EXPECT_EQ(make(2, {}).slots(), 3u);
  EXPECT_EQ(make(8, {}).slots(), 10u);
  EXPECT_EQ(make(16, {}).slots(), 20u);
}

// Operators go out in the order of the queue, each to the worker that comes free first.
TEST(Scheduler, GroupsGoOutInQueueOrderToTheWorkerFreeFirst) {
  Scheduler s = make(2, {kA, kB, kC, kD});
  start(s, 0);
  start(s, 1);
  EXPECT_EQ(dispatch(s, 0).sent.front(), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(dispatch(s, 1).sent.front(), (std::vector<size_t>{6, 7}));
  EXPECT_EQ(s.working(), 2u);
  EXPECT_EQ(answer_all(s, 1), kB);  // the second worker is done first: it takes the next operator
  EXPECT_EQ(dispatch(s, 1).sent, (Batches{{11, 12}}));
  EXPECT_EQ(answer_all(s, 0), kA);
  EXPECT_EQ(dispatch(s, 0).sent.front(), (std::vector<size_t>{13, 14}));
  EXPECT_TRUE(s.pending().empty());
  EXPECT_FALSE(s.done());
  EXPECT_EQ(answer_all(s, 0), kD);
  EXPECT_EQ(answer_all(s, 1), kC);
  EXPECT_TRUE(s.done());
  EXPECT_EQ(dispatch(s, 0).then, Action::kLetGo);  // nothing left: its input is closed
  EXPECT_EQ(dispatch(s, 1).then, Action::kLetGo);
}

// Note [Probes sent ahead]: a worker gets every dtype of its overload at once, and the next overload of its operator
// while it holds no other; a slow probe runs in a turn of its own (Note [Slow probes alone]).
TEST(Scheduler, AWorkerGetsAWholeOverloadAndTheNextOneAhead) {
  Scheduler s = make(1, {kA, kB});
  start(s, 0);
  const Pass first = dispatch(s, 0);
  EXPECT_EQ(first.sent, (Batches{{0, 1, 2}, {3, 4}}));
  EXPECT_EQ(first.joins, (std::vector<std::vector<bool>>{{false, true, true}, {false, true}}));
  EXPECT_EQ(first.begins, (std::vector<bool>{true, false}));  // the first probe's time limit runs from now
  EXPECT_EQ(first.then, Action::kNone);
  EXPECT_EQ(s.current(0), 0);
  EXPECT_TRUE(s.sent_ahead(0, 3));
  EXPECT_FALSE(s.sent_ahead(0, 5));
  EXPECT_TRUE(dispatch(s, 0).sent.empty());  // a.z waits until the worker is on a.y
  EXPECT_EQ(s.result(0), 0u);
  EXPECT_EQ(s.result(0), 1u);
  EXPECT_TRUE(dispatch(s, 0).sent.empty());
  EXPECT_EQ(s.result(0), 2u);
  EXPECT_EQ(s.current(0), 3);
  const Pass next = dispatch(s, 0);
  EXPECT_EQ(next.sent, (Batches{{5}}));
  EXPECT_EQ(next.begins, (std::vector<bool>{false}));
  EXPECT_EQ(s.pending(), (Groups{kB}));  // the next operator is not the worker's until it is done with this one

  Scheduler slow(kPlan, {0.001, 0.2, 0.001, 0.001, 0.001, 0.001}, 1);
  slow.push_pending({0, 1, 2}, /*front=*/false);
  start(slow, 0);
  EXPECT_EQ(dispatch(slow, 0).joins, (std::vector<std::vector<bool>>{{false, false, false}}));
}

// Note [Spare workers]: at most --jobs workers probe at once; a spare waits, and takes a dead worker's work.
TEST(Scheduler, ASpareWaitsWhileJobsWorkersAreBusy) {
  Scheduler s = make(2, {kA, kB, kC});
  for (size_t slot = 0; slot < 3; ++slot) start(s, slot);
  dispatch(s, 0);
  dispatch(s, 1);
  const Pass spare = dispatch(s, 2);
  EXPECT_EQ(spare.then, Action::kWait);
  EXPECT_TRUE(spare.sent.empty());
  EXPECT_EQ(s.working(), 2u);
  EXPECT_EQ(s.pending(), (Groups{kC}));
  // The first worker dies in its first probe: the probe has its record, and the spare takes the rest of its overload.
  s.remove_worker(0);
  EXPECT_EQ(s.take_out(0, 0), 0u);
  s.requeue_rest(0);
  EXPECT_EQ(dispatch(s, 2).sent, (Batches{{1, 2}}));
  EXPECT_EQ(s.working(), 2u);
}

// Note [Overloads for idle workers]: with no operator left, an idle worker takes the last overload (all its dtypes)
// of the worker with the most left in it; never what a worker was sent.
TEST(Scheduler, AnIdleWorkerTakesTheLastOverloadOfTheWorkerWithTheMostLeft) {
  Scheduler s = make(3, {kA, kD});
  for (size_t slot = 0; slot < 3; ++slot) start(s, slot);
  EXPECT_EQ(dispatch(s, 0).sent, (Batches{{0, 1, 2}, {3, 4}}));       // a.z left: 1
  EXPECT_EQ(dispatch(s, 1).sent, (Batches{{13, 14}, {15, 16, 17}}));  // d.y, d.z left: 2 in d.z
  EXPECT_EQ(dispatch(s, 2).sent, (Batches{{19, 20}}));                // d.z, both dtypes
  EXPECT_EQ(answer_all(s, 2), (std::vector<size_t>{19, 20}));
  EXPECT_EQ(dispatch(s, 2).sent, (Batches{{5}}));  // one left in each: the first worker's
  EXPECT_EQ(answer_all(s, 2), (std::vector<size_t>{5}));
  EXPECT_EQ(dispatch(s, 2).sent, (Batches{{18}}));
  EXPECT_EQ(answer_all(s, 2), (std::vector<size_t>{18}));
  // What the others were sent stays theirs: the idle worker goes.
  EXPECT_EQ(dispatch(s, 2).then, Action::kLetGo);
  EXPECT_TRUE(s.sent_ahead(1, 17));
  EXPECT_EQ(answer_all(s, 0), (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(answer_all(s, 1), (std::vector<size_t>{13, 14, 15, 16, 17}));
  EXPECT_TRUE(s.done());
}

// Note [Probes that end their worker]: the probe in progress, those sent ahead and the rest of the operator go back
// to the front of the queue an overload at a time, in their order, ahead of the operators not handed out.
TEST(Scheduler, RequeueRestPutsEachOverloadBackAtTheFrontInOrder) {
  Scheduler s = make(1, {kA, kB, kC});
  start(s, 0);
  dispatch(s, 0);
  EXPECT_EQ(s.result(0), 0u);
  EXPECT_EQ(s.pending(), (Groups{kB, kC}));
  s.remove_worker(0);
  s.requeue_rest(0);
  EXPECT_EQ(s.pending(), (Groups{{1, 2}, {3, 4}, {5}, kB, kC}));
  EXPECT_EQ(s.current(0), -1);
  EXPECT_EQ(s.working(), 0u);

  // A worker that died in a probe sent ahead (seen in a turn): that one is recorded, the others go back.
  Scheduler t = make(1, {kA, kB});
  start(t, 0);
  dispatch(t, 0);
  t.remove_worker(0);
  EXPECT_EQ(t.take_out(0, 2), 2u);
  t.requeue_rest(0);
  EXPECT_EQ(t.pending(), (Groups{{0, 1}, {3, 4}, {5}, kB}));

  // One that ended between two probes gives the rest of its operator back whole.
  Scheduler u = make(1, {kA, kB});
  start(u, 0);
  dispatch(u, 0);
  for (size_t i = 0; i < 5; ++i) u.result(0);
  u.remove_worker(0);
  u.give_back(0);
  EXPECT_EQ(u.pending(), (Groups{{5}, kB}));
}

// A worker that said "retire" gets nothing more, and what it was sent after its last result goes back to the queue.
TEST(Scheduler, ARetiringWorkersProbesGoBackToTheQueue) {
  Scheduler s = make(2, {kA});
  start(s, 0);
  start(s, 1);
  dispatch(s, 0);
  EXPECT_EQ(s.able(), 2u);
  s.worker_retires(0);
  EXPECT_TRUE(s.retiring(0));
  EXPECT_EQ(s.able(), 1u);
  EXPECT_EQ(s.result(0), 0u);
  EXPECT_EQ(s.result(0), 1u);
  EXPECT_EQ(s.result(0), 2u);
  EXPECT_EQ(dispatch(s, 0).sent, Batches{});       // on a.y, but a.z is not sent ahead
  EXPECT_EQ(dispatch(s, 1).then, Action::kLetGo);  // nor taken from it by an idle worker
  s.remove_worker(0);                              // it exited after its results
  s.requeue_rest(0);
  EXPECT_EQ(s.pending(), (Groups{{3, 4}, {5}}));
}

// Note [Caught faults]: a worker that said "finish" gets the rest of its operator, and then goes.
TEST(Scheduler, AFinishingWorkerGetsTheRestOfItsOperatorOnly) {
  Scheduler s = make(1, {kA, kB});
  start(s, 0);
  dispatch(s, 0);
  s.worker_finishes(0);
  EXPECT_EQ(s.able(), 0u);
  EXPECT_EQ(answer_all(s, 0), kA);
  EXPECT_EQ(dispatch(s, 0).then, Action::kLetGo);
  EXPECT_EQ(s.pending(), (Groups{kB}));
}

// Note [Turns that fail]: the probes a worker cannot vouch for go back one by one, each to run in a turn alone.
TEST(Scheduler, TheProbesOfATurnAfterAgainRunAlone) {
  Scheduler s = make(2, {kA, kB});
  start(s, 0);
  dispatch(s, 0);
  s.again(0);
  s.again(0);
  s.again(0);
  EXPECT_EQ(s.current(0), 3);                           // the next overload begins
  EXPECT_EQ(s.pending(), (Groups{{2}, {1}, {0}, kB}));  // the last one given back first
  start(s, 1);
  for (size_t i : {2u, 1u, 0u}) {
    const Pass pass = dispatch(s, 1);
    EXPECT_EQ(pass.sent, (Batches{{i}}));
    EXPECT_EQ(pass.joins, (std::vector<std::vector<bool>>{{false}}));
    EXPECT_EQ(answer_all(s, 1), (std::vector<size_t>{i}));
  }
}

// Note [Starts that pay] and Note [Spare workers]: --jobs workers at first; once one was ready, only the starts that
// the work not handed out pays for, by its figures; the spares too once a worker died.
TEST(Scheduler, StartsThatPayWithTheFigures) {
  Scheduler s = make(4, {kA, kB}, 0.1);  // 1.1 s of work
  EXPECT_EQ(s.starts_wanted(), 4u);
  s.add_worker(0);
  s.add_worker(1);
  EXPECT_EQ(s.starts_wanted(), 0u);  // the others start once one is ready (Note [Half the workers first])
  s.worker_ready(0, 0.5);
  // 1.1 s among 2 workers and one more is 0.37 s each: less than the 0.5 s a start takes.
  EXPECT_EQ(s.starts_wanted(), 1u);
  dispatch(s, 0);  // 0.5 s left
  EXPECT_EQ(s.starts_wanted(), 0u);
  s.remove_worker(0);  // it died: its probes go back, and the spare may start too
  s.requeue_rest(0);
  // Among 1 able worker: a second keeps two able; 1.1 s among 2 pays for one more, not among 3.
  EXPECT_EQ(s.starts_wanted(), 2u);
  for (size_t slot : {0u, 2u, 3u, 4u}) s.add_worker(slot);
  EXPECT_EQ(s.starts_wanted(), 0u);  // every slot is taken

  Scheduler plenty = make(4, {kA, kB}, 1.0);  // 11 s of work: every slot pays
  plenty.add_worker(0);
  plenty.worker_ready(0, 0.5);
  EXPECT_EQ(plenty.starts_wanted(), 3u);  // --jobs
  plenty.remove_worker(0);
  plenty.requeue_rest(0);
  EXPECT_EQ(plenty.starts_wanted(), 5u);  // and the spare, once a worker died

  Scheduler cheap = make(4, {kC}, 0.02);  // 0.04 s of work and no worker left: two, not four
  cheap.add_worker(0);
  cheap.worker_ready(0, 0.5);
  cheap.remove_worker(0);
  EXPECT_EQ(cheap.starts_wanted(), 2u);
  Scheduler none = make(4, {});
  EXPECT_EQ(none.starts_wanted(), 0u);  // nothing to hand out
}

// Note [Starts that pay]: a start pays while the work not handed out, shared among the workers that can take it
// and those started, is more than a start takes; and while fewer than two can take work, whatever is left.
TEST(Scheduler, OnlyStartsThatPayOrKeepTwoWorkersAble) {
  EXPECT_EQ(starts_that_pay(100.0, 10, 0.5, 5), 5u);  // plenty of work: every slot
  EXPECT_EQ(starts_that_pay(3.0, 4, 0.5, 10), 2u);    // 3 s among 5 workers is 0.6 s a worker, among 6 it is 0.5 s
  EXPECT_EQ(starts_that_pay(0.04, 0, 0.5, 19), 2u);   // none left for the last cheap work: two, not nineteen
  EXPECT_EQ(starts_that_pay(0.04, 1, 0.5, 19), 1u);
  EXPECT_EQ(starts_that_pay(0.04, 2, 0.5, 19), 0u);
  EXPECT_EQ(starts_that_pay(0.04, 0, 0.5, 1), 1u);  // no more than there is room for
  EXPECT_EQ(starts_that_pay(50.0, 3, 0.5, 0), 0u);
}

// Note [Slow probes alone]: an overload's probes join one turn, but a probe expected to take long runs in a turn of
// its own.
TEST(Scheduler, SlowProbesRunInTurnsOfTheirOwn) {
  EXPECT_EQ(joins_turn({}), std::vector<bool>{});
  EXPECT_EQ(joins_turn({0.001}), std::vector<bool>{false});
  EXPECT_EQ(joins_turn({0.001, 0.002, 0.0}), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(joins_turn({0.001, 0.15, 0.002, 0.003}), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(joins_turn({0.4, 0.001, 0.2, 0.3}), (std::vector<bool>{false, false, false, false}));
  EXPECT_EQ(joins_turn({0.0499, 0.05}), (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace mps_audit
