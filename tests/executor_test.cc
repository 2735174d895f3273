// Tests for executor/: scheduling, wake, snooze, cancel and how runs are ordered.
#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

TEST(ExecutorPool, ThreadsFor) {
  EXPECT_EQ(3u, ExecutorPool::threadsFor(3));
  EXPECT_GE(ExecutorPool::threadsFor(0), 1u);
  ExecutorPool pool(2);
  EXPECT_EQ(2u, pool.numThreads(TaskGroup::kNonIO));
}

TEST(ExecutorPool, WorkerThreadsAreNamedNonIoPoolN) {
  NullTaskable owner;
  std::mutex mu;
  std::set<std::string> names;
  std::latch both(2);
  // Two tasks that each wait for the other: they must be on different threads.
  ExecutorPool pool(2);
  for (int i = 0; i < 2; ++i) {
    pool.schedule(std::make_shared<LambdaTask>(owner, [&](Task&) {
      {
        std::lock_guard lock(mu);
        names.insert(threadName());
      }
      both.arrive_and_wait();
      return false;
    }));
  }
  both.wait();
  std::lock_guard lock(mu);
  EXPECT_EQ((std::set<std::string>{"NonIoPool0", "NonIoPool1"}), names);
}

TEST(ExecutorPool, OneShotTaskRunsOnceThenIsDead) {
  NullTaskable owner;
  auto task = std::make_shared<MockTask>(owner);
  RunCounter runs;
  EXPECT_CALL(*task, run()).WillOnce(Invoke([&] {
    runs.add();
    return false;
  }));
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  ASSERT_NE(kNoTask, id);
  EXPECT_EQ(id, task->id());
  ASSERT_TRUE(runs.waitFor(1));
  fence(pool);
  EXPECT_EQ(TaskState::kDead, task->state());
  // A finished id is unknown: harmless, and the AndWait forms say so.
  pool.wake(id);
  pool.snooze(id, milliseconds(0));
  EXPECT_FALSE(pool.wakeAndWait(id));
  EXPECT_FALSE(pool.snoozeAndWait(id, milliseconds(0)));
  EXPECT_FALSE(pool.cancel(id));
  fence(pool);
}

TEST(ExecutorPool, UnknownIdIsHarmless) {
  ExecutorPool pool(1);
  for (TaskId id : {kNoTask, TaskId{12345}}) {
    pool.wake(id);
    pool.snooze(id, milliseconds(1));
    EXPECT_FALSE(pool.wakeAndWait(id));
    EXPECT_FALSE(pool.snoozeAndWait(id, milliseconds(1)));
    EXPECT_FALSE(pool.cancel(id));
  }
}

TEST(ExecutorPool, ScheduleTwiceIsRefused) {
  NullTaskable owner;
  RunCounter runs;
  auto task = sleeper(owner, runs);
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  ASSERT_NE(kNoTask, id);
  EXPECT_EQ(kNoTask, pool.schedule(task));
  EXPECT_EQ(id, task->id());
  EXPECT_EQ(kNoTask, pool.schedule(nullptr));
}

TEST(ExecutorPool, ManyTasksStayFindableAcrossCancels) {
  NullTaskable owner;
  RunCounter runs;
  std::vector<TaskId> ids;
  ExecutorPool pool(1);
  for (int i = 0; i < 5000; ++i) ids.push_back(pool.schedule(sleeper(owner, runs)));
  std::mt19937 random(7);
  std::vector<TaskId> shuffled = ids;
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  std::set<TaskId> cancelled(shuffled.begin(), shuffled.begin() + 3000);
  for (TaskId id : cancelled) EXPECT_TRUE(pool.cancel(id));
  for (TaskId id : ids) {
    EXPECT_EQ(!cancelled.contains(id), pool.snoozeAndWait(id, hours(1))) << id;
  }
  pool.unregisterTaskable(owner);
  for (TaskId id : ids) EXPECT_FALSE(pool.cancel(id));
  EXPECT_EQ(0, runs.count());
}

TEST(ExecutorPool, TaskDueInTheFutureRunsWhenDue) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  pool.schedule(
      sleeper(owner, runs, clock::TimePoint(std::chrono::steady_clock::now() + milliseconds(1))));
  EXPECT_TRUE(runs.waitFor(1));
}

TEST(ExecutorPool, WakeRunsASnoozedTaskOnce) {
  NullTaskable owner;
  RunCounter runs;
  auto task = sleeper(owner, runs);
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  fence(pool);
  EXPECT_EQ(0, runs.count());
  pool.wake(id);
  ASSERT_TRUE(runs.waitFor(1));
  fence(pool);
  EXPECT_EQ(1, runs.count());
  EXPECT_EQ(TaskState::kSnoozed, task->state());
  EXPECT_EQ(clock::kNever, task->wakeTime());
  EXPECT_TRUE(pool.wakeAndWait(id));
  ASSERT_TRUE(runs.waitFor(2));
  fence(pool);
  EXPECT_EQ(2, runs.count());
}

TEST(ExecutorPool, SeveralWakesBeforeTheRunGiveOneRun) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(sleeper(owner, runs));
  {
    Blocker blocker(pool);
    for (int i = 0; i < 10; ++i) pool.wake(id);
    EXPECT_TRUE(pool.wakeAndWait(id));
  }
  ASSERT_TRUE(runs.waitFor(1));
  fence(pool);
  EXPECT_EQ(1, runs.count());
}

TEST(ExecutorPool, SnoozeThenWakeRunsOnceNow) {
  NullTaskable owner;
  RunCounter runs;
  auto task = sleeper(owner, runs);
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  {
    Blocker blocker(pool);
    pool.snooze(id, hours(1));
    pool.wake(id);  // wins over the snooze: due now
  }
  ASSERT_TRUE(runs.waitFor(1));
  fence(pool);
  EXPECT_EQ(1, runs.count());
}

TEST(ExecutorPool, WakeDuringARunCausesOneMoreRun) {
  NullTaskable owner;
  RunCounter runs;
  std::latch running(1), woken(1);
  int calls = 0;  // only touched by run(), which never runs concurrently
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(std::make_shared<LambdaTask>(owner, [&](Task& self) {
    if (++calls == 1) {
      running.count_down();
      woken.wait();
    }
    self.snooze(clock::Duration::max());  // after the wake: the wake still counts
    runs.add();
    return true;
  }));
  running.wait();
  pool.wake(id);
  pool.wake(id);
  woken.count_down();
  ASSERT_TRUE(runs.waitFor(2));
  fence(pool);
  EXPECT_EQ(2, runs.count());
}

TEST(ExecutorPool, CancelThenSnoozeOrWakeDoesNotRevive) {
  NullTaskable owner;
  auto task = std::make_shared<MockTask>(owner, clock::kNever);
  EXPECT_CALL(*task, run()).Times(0);
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  EXPECT_TRUE(pool.cancel(id));
  EXPECT_EQ(TaskState::kDead, task->state());
  EXPECT_FALSE(pool.cancel(id));
  pool.snooze(id, milliseconds(0));
  pool.wake(id);
  EXPECT_FALSE(pool.snoozeAndWait(id, milliseconds(0)));
  EXPECT_FALSE(pool.wakeAndWait(id));
  fence(pool);
}

TEST(ExecutorPool, CancelOfAQueuedTaskStopsItsRun) {
  NullTaskable owner;
  auto task = std::make_shared<MockTask>(owner);
  EXPECT_CALL(*task, run()).Times(0);
  ExecutorPool pool(1);
  Blocker blocker(pool);
  EXPECT_TRUE(pool.cancel(pool.schedule(task)));
  blocker.release();
  fence(pool);
}

TEST(ExecutorPool, CancelDuringARunLetsItFinishButNotRunAgain) {
  NullTaskable owner;
  std::latch running(1), cancelled(1);
  auto task = std::make_shared<MockTask>(owner);
  EXPECT_CALL(*task, run()).WillOnce(Invoke([&] {
    running.count_down();
    cancelled.wait();
    return true;  // would run again at once, were it not cancelled
  }));
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  running.wait();
  EXPECT_TRUE(pool.cancel(id));
  cancelled.count_down();
  fence(pool);
  EXPECT_EQ(TaskState::kDead, task->state());
}

TEST(ExecutorPool, ReturningTrueWithoutSnoozeRunsAgainAtTheCurrentWakeTime) {
  NullTaskable owner;
  RunCounter runs;
  auto task = std::make_shared<MockTask>(owner);  // wake time in the past
  EXPECT_CALL(*task, run())
      .WillOnce(Invoke([&] {
        runs.add();
        return true;
      }))
      .WillOnce(Invoke([&] {
        runs.add();
        return true;
      }))
      .WillOnce(Invoke([&] {
        runs.add();
        return false;
      }));
  ExecutorPool pool(1);
  pool.schedule(task);
  ASSERT_TRUE(runs.waitFor(3));
  fence(pool);
  EXPECT_EQ(TaskState::kDead, task->state());
}

TEST(ExecutorPool, ReturningTrueWithAWakeTimeOfNeverSleeps) {
  NullTaskable owner;
  RunCounter runs;
  auto task = sleeper(owner, runs, clock::TimePoint{});  // runs at once, then sleeps
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(task);
  ASSERT_TRUE(runs.waitFor(1));
  fence(pool);
  EXPECT_EQ(1, runs.count());
  EXPECT_TRUE(pool.cancel(id));
}

TEST(ExecutorPool, TaskSnoozedForeverDoesNotRun) {
  NullTaskable owner;
  auto scheduled_never = std::make_shared<MockTask>(owner, clock::kNever);
  auto snoozed_never = std::make_shared<MockTask>(owner, clock::TimePoint(hours(1'000'000)));
  EXPECT_CALL(*scheduled_never, run()).Times(0);
  EXPECT_CALL(*snoozed_never, run()).Times(0);
  ExecutorPool pool(1);
  pool.schedule(scheduled_never);
  const TaskId id = pool.schedule(snoozed_never);
  pool.snooze(id, hours(1));
  EXPECT_TRUE(pool.snoozeAndWait(id, clock::Duration::max()));
  EXPECT_EQ(clock::kNever, snoozed_never->wakeTime());  // saturates, no overflow
  fence(pool);
  EXPECT_EQ(TaskState::kSnoozed, scheduled_never->state());
}

TEST(ExecutorPool, SnoozeToAnEarlierTimeRearmsTheTimer) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(
      sleeper(owner, runs, clock::TimePoint(std::chrono::steady_clock::now() + hours(1))));
  pool.snooze(id, hours(3));  // later: a store
  pool.snooze(id, hours(2));
  pool.snooze(id, milliseconds(1));  // earlier than the armed timer
  ASSERT_TRUE(runs.waitFor(1));
  EXPECT_TRUE(pool.snoozeAndWait(id, hours(1)));
  EXPECT_TRUE(pool.snoozeAndWait(id, milliseconds(1)));
  ASSERT_TRUE(runs.waitFor(2));
  pool.snooze(id, milliseconds(0));  // due now
  ASSERT_TRUE(runs.waitFor(3));
}

TEST(ExecutorPool, SnoozeOfAHeldTaskRearmsLikeSnoozeOfItsId) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  auto task = sleeper(owner, runs, clock::TimePoint(std::chrono::steady_clock::now() + hours(1)));
  pool.schedule(task);
  pool.snooze(*task, hours(3));  // later than the armed timer: a store
  pool.snooze(*task, clock::Duration::max());
  EXPECT_EQ(clock::kNever, task->wakeTime());
  pool.snooze(*task, milliseconds(1));  // earlier: re-armed
  ASSERT_TRUE(runs.waitFor(1));
  pool.snooze(*task, milliseconds(0));  // due now
  ASSERT_TRUE(runs.waitFor(2));
}

TEST(ExecutorPool, SnoozeUntilTakesASteadyClockTime) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  auto task = sleeper(owner, runs, clock::TimePoint(std::chrono::steady_clock::now() + hours(1)));
  pool.schedule(task);
  const clock::TimePoint later = std::chrono::steady_clock::now() + hours(2);
  pool.snoozeUntil(*task, later);  // later than the armed timer: a store
  EXPECT_EQ(later, task->wakeTime());
  pool.snoozeUntil(*task, std::chrono::steady_clock::now() + milliseconds(1));
  ASSERT_TRUE(runs.waitFor(1));
  pool.snoozeUntil(*task, clock::TimePoint{});  // in the past: due now
  ASSERT_TRUE(runs.waitFor(2));
}

TEST(ExecutorPool, SnoozeOfAHeldTaskNeverRevivesOrSchedulesIt) {
  NullTaskable owner;
  auto cancelled = std::make_shared<MockTask>(owner, clock::kNever);
  auto unscheduled = std::make_shared<MockTask>(owner, clock::kNever);
  EXPECT_CALL(*cancelled, run()).Times(0);
  EXPECT_CALL(*unscheduled, run()).Times(0);
  ExecutorPool pool(1);
  EXPECT_TRUE(pool.cancel(pool.schedule(cancelled)));
  pool.snooze(*cancelled, milliseconds(0));
  pool.snooze(*unscheduled, milliseconds(0));
  fence(pool);
  EXPECT_EQ(TaskState::kDead, cancelled->state());
}

TEST(ExecutorPool, TaskSnoozingItselfRunsPeriodically) {
  NullTaskable owner;
  RunCounter runs;
  int calls = 0;
  auto task = std::make_shared<LambdaTask>(owner, [&](Task& self) {
    self.snooze(milliseconds(1));
    runs.add();
    return ++calls < 5;
  });
  ExecutorPool pool(2);
  pool.schedule(task);
  ASSERT_TRUE(runs.waitFor(5));
}

TEST(Task, SnoozeAlignedWakesAtTheNextMultipleOfThePeriod) {
  NullTaskable owner;
  const milliseconds period(25);
  LambdaTask first(owner, [](Task&) { return false; });
  LambdaTask second(owner, [](Task&) { return false; });
  const auto before = std::chrono::steady_clock::now().time_since_epoch();
  first.snoozeAligned(period);
  second.snoozeAligned(period);
  const auto after = std::chrono::steady_clock::now().time_since_epoch();
  const auto wake = first.wakeTime().time_since_epoch();
  EXPECT_EQ(wake % period, clock::Duration::zero());
  EXPECT_GT(wake, before);
  EXPECT_LE(wake, after + period);
  // Snoozed a moment apart, both fall due in the same instant (unless a
  // multiple passed in between, which the check allows for).
  const auto second_wake = second.wakeTime().time_since_epoch();
  EXPECT_TRUE(second_wake == wake || second_wake == wake + period);
}

TEST(Task, SnoozeAlignedOfZeroOrNeverIsPlainSnooze) {
  NullTaskable owner;
  LambdaTask task(owner, [](Task&) { return false; });
  task.snoozeAligned(clock::Duration::max());
  EXPECT_EQ(clock::kNever, task.wakeTime());
  task.snoozeAligned(clock::Duration::max() - clock::Duration(1));  // past kNever: saturates
  EXPECT_EQ(clock::kNever, task.wakeTime());
  const auto before = std::chrono::steady_clock::now().time_since_epoch();
  task.snoozeAligned(clock::Duration::zero());
  EXPECT_GE(task.wakeTime().time_since_epoch(), before);
  EXPECT_LE(task.wakeTime().time_since_epoch(),
            std::chrono::steady_clock::now().time_since_epoch());
}

TEST(ExecutorPool, NeverRunsATaskConcurrentlyWithItself) {
  NullTaskable owner;
  OverlapCounter overlap;
  RunCounter runs;
  ExecutorPool pool(4);
  const TaskId id =
      pool.schedule(overlapProbe(owner, overlap, runs, clock::Duration::max(), clock::kNever));
  std::vector<std::thread> wakers;
  for (int t = 0; t < 4; ++t) {
    wakers.emplace_back([&pool, id] {
      for (int i = 0; i < 2000; ++i) {
        if (i % 2) {
          pool.wake(id);
        } else {
          pool.snooze(id, milliseconds(0));
        }
      }
    });
  }
  for (auto& t : wakers) t.join();
  pool.wake(id);
  ASSERT_TRUE(runs.waitFor(1));
  EXPECT_EQ(0, overlap.overlaps.load());
}

TEST(ExecutorPool, ThrowingTaskIsDeadAndThePoolThreadGoesOn) {
  NullTaskable owner;
  auto throws = std::make_shared<MockTask>(owner);
  auto throws_other = std::make_shared<MockTask>(owner);
  EXPECT_CALL(*throws, run()).WillOnce(Invoke([]() -> bool { throw std::runtime_error("boom"); }));
  EXPECT_CALL(*throws_other, run()).WillOnce(Invoke([]() -> bool { throw 42; }));
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(throws);
  pool.schedule(throws_other);
  fence(pool);  // the only worker survived both
  EXPECT_EQ(TaskState::kDead, throws->state());
  EXPECT_EQ(TaskState::kDead, throws_other->state());
  EXPECT_FALSE(pool.wakeAndWait(id));
  fence(pool);
}

}  // namespace
}  // namespace syncwrite::executor
