// Tests for executor/: Task, ExecutorPool, NullTaskable.
//
// No timing assertions and no sleeping to wait for something: tests wait on
// conditions with a generous bound that only guards against hanging. To show
// that something did *not* run, tests use a one-worker pool and a fence: a
// one-shot task scheduled afterwards. The ready queue is FIFO, so when the
// fence has run, every run queued before it has run too.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "executor/executor_pool.h"
#include "executor/task.h"

namespace syncwrite::executor {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::Invoke;
using ::testing::Return;

// Bounds every wait; reaching it means the test has failed (or hung).
constexpr auto kGuard = std::chrono::seconds(60);

// Counts runs; lets a test wait until a count is reached.
class RunCounter {
 public:
  void add() {
    std::lock_guard lock(mu_);
    ++count_;
    cv_.notify_all();
  }
  int count() {
    std::lock_guard lock(mu_);
    return count_;
  }
  bool waitFor(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kGuard, [&] { return count_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

class LambdaTask : public Task {
 public:
  LambdaTask(Taskable& owner, std::function<bool(Task&)> fn,
             clock::TimePoint initial_wake = clock::TimePoint{})
      : Task(owner, "lambda", TaskGroup::kNonIO, initial_wake), fn_(std::move(fn)) {}
  bool run() override { return fn_(*this); }

 private:
  std::function<bool(Task&)> fn_;
};

class MockTask : public Task {
 public:
  explicit MockTask(Taskable& owner, clock::TimePoint initial_wake = clock::TimePoint{})
      : Task(owner, "mock", TaskGroup::kNonIO, initial_wake) {}
  MOCK_METHOD(bool, run, (), (override));
};

// A task that counts its runs and then sleeps until woken or snoozed.
std::shared_ptr<LambdaTask> sleeper(Taskable& owner, RunCounter& runs,
                                    clock::TimePoint initial_wake = clock::kNever) {
  return std::make_shared<LambdaTask>(
      owner,
      [&runs](Task& self) {
        self.snooze(clock::Duration::max());
        runs.add();
        return true;
      },
      initial_wake);
}

// Waits until every run queued so far on a one-worker pool has happened.
void fence(ExecutorPool& pool) {
  static NullTaskable owner;
  // Owned with the task: set_value() may still be returning when we are gone.
  auto ran = std::make_shared<std::promise<void>>();
  std::future<void> done = ran->get_future();
  ASSERT_NE(kNoTask, pool.schedule(std::make_shared<LambdaTask>(owner, [ran](Task&) {
    ran->set_value();
    return false;
  })));
  ASSERT_EQ(std::future_status::ready, done.wait_for(kGuard));
}

// Occupies the only worker of a pool until release(), so that tests can act on
// tasks that are queued but not yet running.
class Blocker {
 public:
  explicit Blocker(ExecutorPool& pool) {
    pool.schedule(std::make_shared<LambdaTask>(owner_, [sync = sync_](Task&) {
      sync->started.count_down();
      sync->release.wait();
      return false;
    }));
    sync_->started.wait();
  }
  ~Blocker() { release(); }
  void release() {
    if (!released_) sync_->release.count_down();
    released_ = true;
  }

 private:
  // Owned with the task: the blocker may be gone before the task has returned.
  struct Sync {
    std::latch started{1};
    std::latch release{1};
  };
  static inline NullTaskable owner_;
  std::shared_ptr<Sync> sync_ = std::make_shared<Sync>();
  bool released_ = false;
};

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
      char name[16] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      {
        std::lock_guard lock(mu);
        names.insert(name);
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

TEST(ExecutorPool, NeverRunsATaskConcurrentlyWithItself) {
  NullTaskable owner;
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
  RunCounter runs;
  ExecutorPool pool(4);
  const TaskId id = pool.schedule(std::make_shared<LambdaTask>(
      owner,
      [&](Task& self) {
        if (inside.exchange(true)) overlaps.fetch_add(1);
        self.snooze(clock::Duration::max());
        inside.store(false);
        runs.add();
        return true;
      },
      clock::kNever));
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
  EXPECT_EQ(0, overlaps.load());
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

}  // namespace
}  // namespace syncwrite::executor
