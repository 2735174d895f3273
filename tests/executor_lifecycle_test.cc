// Tests for executor/: unregistering owners, calls from inside a run, destruction.
#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

TEST(ExecutorPool, UnregisterWaitsForARunningTaskAndPreventsLaterRuns) {
  NullTaskable owner;
  std::latch running(1), finish(1);
  std::atomic<bool> run_finished{false};
  int calls = 0;
  auto task = std::make_shared<LambdaTask>(owner, [&](Task&) {
    ++calls;
    running.count_down();
    finish.wait();
    run_finished.store(true);
    return true;  // would run again at once
  });
  RunCounter sleeper_runs;
  auto sleeping =
      sleeper(owner, sleeper_runs, clock::TimePoint(std::chrono::steady_clock::now() + hours(1)));
  ExecutorPool pool(2);
  const TaskId id = pool.schedule(task);
  const TaskId sleeping_id = pool.schedule(sleeping);
  running.wait();

  std::atomic<bool> unregistered{false};
  std::thread unregister([&] {
    pool.unregisterTaskable(owner);
    EXPECT_TRUE(run_finished.load());  // returned only after the run ended
    unregistered.store(true);
  });
  // unregisterTaskable marks the tasks dead before it waits.
  while (task->state() != TaskState::kDead) std::this_thread::yield();
  EXPECT_FALSE(unregistered.load());
  finish.count_down();
  unregister.join();

  EXPECT_TRUE(owner.isShutdown());
  EXPECT_EQ(TaskState::kDead, sleeping->state());
  pool.wake(id);
  pool.wake(sleeping_id);
  EXPECT_FALSE(pool.wakeAndWait(sleeping_id));
  EXPECT_FALSE(pool.cancel(id));
  // Nothing of the owner runs again; with both workers fenced, nothing is queued.
  fence(pool);
  fence(pool);
  EXPECT_EQ(1, calls);
  EXPECT_EQ(0, sleeper_runs.count());
}

TEST(ExecutorPool, UnregisterWaitsForARunOfATaskCancelledDuringIt) {
  // The task has left the pool's table (cancel), but its run still uses the
  // owner's state: unregisterTaskable must wait for it all the same.
  NullTaskable owner;
  std::latch running(1), finish(1);
  std::atomic<bool> run_finished{false};
  auto task = std::make_shared<LambdaTask>(owner, [&](Task&) {
    running.count_down();
    finish.wait();
    run_finished.store(true);
    return true;
  });
  ExecutorPool pool(2);
  const TaskId id = pool.schedule(task);
  running.wait();
  ASSERT_TRUE(pool.cancel(id));

  std::atomic<bool> unregistered{false};
  std::thread unregister([&] {
    pool.unregisterTaskable(owner);
    EXPECT_TRUE(run_finished.load());  // returned only after the run ended
    unregistered.store(true);
  });
  // Give the unregistering thread every chance to return too early; the
  // assertion is on the order of events, not on time.
  for (int i = 0; i < 1000 && !unregistered.load(); ++i) std::this_thread::yield();
  EXPECT_FALSE(unregistered.load());
  finish.count_down();
  unregister.join();
  EXPECT_TRUE(unregistered.load());
}

TEST(ExecutorPool, UnregisterDropsQueuedAndTimedTasksAndTheirReferences) {
  NullTaskable owner;
  auto queued = std::make_shared<MockTask>(owner);
  auto timed = std::make_shared<MockTask>(
      owner, clock::TimePoint(std::chrono::steady_clock::now() + hours(1)));
  EXPECT_CALL(*queued, run()).Times(0);
  EXPECT_CALL(*timed, run()).Times(0);
  ExecutorPool pool(1);
  {
    Blocker blocker(pool);
    pool.schedule(queued);
    const TaskId timed_id = pool.schedule(timed);
    EXPECT_TRUE(pool.snoozeAndWait(timed_id, hours(2)));  // its timer is armed
    pool.unregisterTaskable(owner);
  }
  EXPECT_EQ(1, queued.use_count());
  EXPECT_EQ(1, timed.use_count());
  fence(pool);
}

TEST(ExecutorPool, ScheduleAfterUnregisterIsRefused) {
  NullTaskable owner;
  ExecutorPool pool(1);
  pool.unregisterTaskable(owner);
  auto task = std::make_shared<MockTask>(owner);
  EXPECT_CALL(*task, run()).Times(0);
  EXPECT_EQ(kNoTask, pool.schedule(task));
  EXPECT_EQ(kNoTask, task->id());
  EXPECT_EQ(1, task.use_count());
  fence(pool);
}

TEST(ExecutorPool, UnregisterLeavesOtherOwnersAlone) {
  NullTaskable going, staying;
  RunCounter runs;
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(sleeper(staying, runs));
  pool.unregisterTaskable(going);
  EXPECT_FALSE(staying.isShutdown());
  EXPECT_TRUE(pool.wakeAndWait(id));
  EXPECT_TRUE(runs.waitFor(1));
}

TEST(ExecutorPool, UnregisterFromInsideTheOwnersTaskDoesNotWaitForItself) {
  NullTaskable owner;
  RunCounter others_runs;
  ExecutorPool pool(1);
  const TaskId other = pool.schedule(sleeper(owner, others_runs));
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> unregistered = done->get_future();
  pool.schedule(std::make_shared<LambdaTask>(owner, [&pool, &owner, done](Task&) {
    pool.unregisterTaskable(owner);
    done->set_value();
    return true;
  }));
  ASSERT_EQ(std::future_status::ready, unregistered.wait_for(kGuard));
  EXPECT_FALSE(pool.wakeAndWait(other));
  fence(pool);
  EXPECT_EQ(0, others_runs.count());
}

TEST(ExecutorPool, CallsFromInsideARunWork) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  const TaskId target = pool.schedule(sleeper(owner, runs));
  pool.schedule(std::make_shared<LambdaTask>(owner, [&](Task&) {
    EXPECT_TRUE(pool.snoozeAndWait(target, hours(1)));
    EXPECT_TRUE(pool.wakeAndWait(target));
    return false;
  }));
  EXPECT_TRUE(runs.waitFor(1));
}

TEST(ExecutorPool, DestructionJoinsAndReleasesEveryTask) {
  NullTaskable owner;
  RunCounter runs;
  auto sleeping = sleeper(owner, runs);
  auto timed = sleeper(owner, runs, clock::TimePoint(std::chrono::steady_clock::now() + hours(1)));
  auto cancelled_timed =
      sleeper(owner, runs, clock::TimePoint(std::chrono::steady_clock::now() + hours(1)));
  auto queued = std::make_shared<MockTask>(owner);
  EXPECT_CALL(*queued, run()).Times(::testing::AtMost(1)).WillRepeatedly(Return(false));
  {
    ExecutorPool pool(2);
    pool.schedule(sleeping);
    const TaskId timed_id = pool.schedule(timed);
    EXPECT_TRUE(pool.snoozeAndWait(timed_id, hours(2)));
    const TaskId cancelled_id = pool.schedule(cancelled_timed);
    EXPECT_TRUE(pool.snoozeAndWait(cancelled_id, hours(2)));
    EXPECT_TRUE(pool.cancel(cancelled_id));
    pool.schedule(queued);
  }
  EXPECT_EQ(1, sleeping.use_count());
  EXPECT_EQ(1, timed.use_count());
  EXPECT_EQ(1, cancelled_timed.use_count());
  EXPECT_EQ(1, queued.use_count());
  EXPECT_EQ(0, runs.count());
}

// More due tasks than the ready ring holds (1024) spill into its overflow list;
// they still run once each, in the order they were queued, and an unregister
// drops the owner's entries from both the ring and the overflow.
TEST(ExecutorPool, ABacklogBeyondTheReadyRingRunsInOrderAndUnregisterDropsIt) {
  ExecutorPool pool(1);
  constexpr int kTasks = 3000;
  std::mutex mu;
  std::vector<int> order;
  NullTaskable kept_owner;
  NullTaskable dropped_owner;
  auto record = [&](int i) {
    return [&mu, &order, i](Task&) {
      std::lock_guard lock(mu);
      order.push_back(i);
      return false;
    };
  };
  Blocker blocker(pool);
  std::vector<std::shared_ptr<LambdaTask>> dropped;
  for (int i = 0; i < kTasks; ++i) {
    ASSERT_NE(kNoTask, pool.schedule(std::make_shared<LambdaTask>(kept_owner, record(i))));
    auto task = std::make_shared<LambdaTask>(dropped_owner, record(-1));
    ASSERT_NE(kNoTask, pool.schedule(task));
    dropped.push_back(std::move(task));
  }
  pool.unregisterTaskable(dropped_owner);
  for (const auto& task : dropped) EXPECT_EQ(1, task.use_count());
  blocker.release();
  fence(pool);
  std::vector<int> expected(kTasks);
  for (int i = 0; i < kTasks; ++i) expected[i] = i;
  std::lock_guard lock(mu);
  EXPECT_EQ(expected, order);
}

}  // namespace
}  // namespace syncwrite::executor
