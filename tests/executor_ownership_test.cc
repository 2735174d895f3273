// Tests for executor/: who keeps a task alive, and when its id entry goes.
//
// The pool's id table holds no reference: a scheduled task keeps itself alive
// until it is dead, and its entry is removed by ~Task, on whichever thread
// drops the last reference (task_table.h). These tests pin that down at the
// table and through the pool, including the races a destructor can lose or
// win against lookups and against the pool's own destruction; run them under
// the tsan and asan presets too.
#include "executor/task_access.h"
#include "executor/task_table.h"
#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

// A task with an id, as schedule() would give it, that is never run.
std::shared_ptr<MockTask> idleTask(Taskable& owner, TaskId id) {
  auto task = std::make_shared<MockTask>(owner, clock::kNever);
  TaskAccess::claimId(*task, id);
  return task;
}

void markDead(Task& task) { TaskAccess::record(task).state.store(RecordState::kDead); }

const auto kAccept = [] { return false; };

TEST(TaskTable, AnEntryHoldsNoReferenceAndLeavesWithTheTask) {
  NullTaskable owner;
  TaskTable table;
  auto task = idleTask(owner, 7);
  ASSERT_TRUE(table.insert(task, kAccept));
  EXPECT_EQ(1, task.use_count());
  EXPECT_EQ(1u, table.size());

  bool found = false;
  EXPECT_TRUE(table.withLiveTask(7, [&](TaskTable::Found& live) {
    found = &live.task() == task.get() && live.ref() == task;
  }));
  EXPECT_TRUE(found);
  EXPECT_EQ(1, task.use_count());  // the reference taken by the lookup is gone

  task.reset();
  EXPECT_EQ(0u, table.size());
  EXPECT_FALSE(table.withLiveTask(7, [](TaskTable::Found&) { ADD_FAILURE(); }));
}

TEST(TaskTable, ADeadTaskIsAbsentToLookupsButKeepsItsEntryUntilDestroyed) {
  NullTaskable owner;
  TaskTable table;
  auto dead = idleTask(owner, 1);
  auto live = idleTask(owner, 2);
  ASSERT_TRUE(table.insert(dead, kAccept));
  ASSERT_TRUE(table.insert(live, kAccept));
  markDead(*dead);

  EXPECT_FALSE(table.withLiveTask(1, [](TaskTable::Found&) { ADD_FAILURE(); }));
  EXPECT_TRUE(table.withLiveTask(2, [](TaskTable::Found&) {}));
  const auto all = table.collectLiveIf([](const Task&) { return true; });
  ASSERT_EQ(1u, all.size());
  EXPECT_EQ(live, all[0]);
  EXPECT_EQ(2u, table.size());
  dead.reset();
  EXPECT_EQ(1u, table.size());
}

TEST(TaskTable, ARefusedInsertLeavesNoEntryAndNoLink) {
  NullTaskable owner;
  TaskTable table;
  auto task = idleTask(owner, 3);
  EXPECT_FALSE(table.insert(task, [] { return true; }));
  EXPECT_EQ(0u, table.size());
  EXPECT_EQ(nullptr, TaskAccess::record(*task).table.load());
}

TEST(TaskTable, ATaskDetachedFromItsTableMayOutliveIt) {
  NullTaskable owner;
  auto table = std::make_unique<TaskTable>();
  auto kept = idleTask(owner, 1);
  auto dead = idleTask(owner, 2);
  ASSERT_TRUE(table->insert(kept, kAccept));
  ASSERT_TRUE(table->insert(dead, kAccept));
  markDead(*dead);
  const auto alive = table->detachAll();
  EXPECT_EQ(2u, alive.size());  // dead or not, both objects are still there
  EXPECT_EQ(0u, table->size());
  table.reset();
  kept.reset();  // ~Task must not touch the destroyed table (asan would see it)
  dead.reset();
}

// Destructors racing detachAll(): whichever takes the task's link removes the
// entry; detachAll() returns only when no destructor still needs the table.
TEST(TaskTable, DetachAllRacingDestructorsLeavesNothingBehind) {
  NullTaskable owner;
  constexpr int kTasks = 2000;
  for (int round = 0; round < 20; ++round) {
    auto table = std::make_unique<TaskTable>();
    std::vector<std::shared_ptr<MockTask>> tasks;
    for (int i = 0; i < kTasks; ++i) {
      tasks.push_back(idleTask(owner, static_cast<TaskId>(i) + 1));
      ASSERT_TRUE(table->insert(tasks.back(), kAccept));
    }
    std::latch go(2);
    std::thread releaser([&] {
      go.arrive_and_wait();
      for (auto& task : tasks) task.reset();
    });
    go.arrive_and_wait();
    std::vector<std::shared_ptr<Task>> alive = table->detachAll();
    releaser.join();
    EXPECT_EQ(0u, table->size());
    table.reset();
    alive.clear();  // these destructors run after the table is gone
  }
}

TEST(ExecutorPool, AScheduledTaskNobodyElseHoldsLivesUntilItIsCancelled) {
  NullTaskable owner;
  RunCounter runs;
  ExecutorPool pool(1);
  std::weak_ptr<Task> watch;
  TaskId id;
  {
    auto task = sleeper(owner, runs);
    watch = task;
    id = pool.schedule(task);
  }
  ASSERT_FALSE(watch.expired());
  EXPECT_TRUE(pool.wakeAndWait(id));
  ASSERT_TRUE(runs.waitFor(1));
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(pool.cancel(id));
  fence(pool);  // a run in progress would hold a reference
  EXPECT_TRUE(watch.expired());
  EXPECT_FALSE(pool.cancel(id));
  EXPECT_FALSE(pool.wakeAndWait(id));
}

TEST(ExecutorPool, AFinishedTaskTheCallerStillHoldsIsNotFoundByItsId) {
  NullTaskable owner;
  ExecutorPool pool(1);
  auto task = std::make_shared<LambdaTask>(owner, [](Task&) { return false; });
  const TaskId id = pool.schedule(task);
  fence(pool);
  ASSERT_EQ(TaskState::kDead, task->state());
  EXPECT_EQ(1, task.use_count());  // the pool has let go
  EXPECT_FALSE(pool.wakeAndWait(id));
  EXPECT_FALSE(pool.snoozeAndWait(id, milliseconds(1)));
  EXPECT_FALSE(pool.cancel(id));
  fence(pool);
  EXPECT_EQ(TaskState::kDead, task->state());
}

// Front-end threads schedule one-shot tasks and drop them at once, while
// others wake, snooze and cancel ids of tasks that may be queued, running,
// finished or already destroyed. Every task runs at most once, and runs unless
// a cancel took it first.
TEST(ExecutorPool, CallsByIdRacingTaskDestructionAreSafe) {
  NullTaskable owner;
  constexpr int kPerThread = 3000;
  constexpr int kSchedulers = 2;
  std::atomic<int> runs{0};
  std::atomic<int> cancelled{0};
  std::atomic<TaskId> latest{kNoTask};
  std::atomic<bool> stop{false};
  {
    ExecutorPool pool(2);
    std::vector<std::thread> threads;
    for (int s = 0; s < kSchedulers; ++s) {
      threads.emplace_back([&] {
        for (int i = 0; i < kPerThread; ++i) {
          auto task = std::make_shared<LambdaTask>(owner, [&runs](Task&) {
            runs.fetch_add(1);
            return false;
          });
          latest.store(pool.schedule(task));
        }
      });
    }
    std::thread poker([&] {
      std::mt19937 random(1);
      while (!stop.load()) {
        const TaskId top = latest.load();
        if (top == kNoTask) continue;
        const TaskId id = top - std::min<TaskId>(top - 1, random() % 8);
        switch (random() % 3) {
          case 0:
            pool.wake(id);
            break;
          case 1:
            pool.snooze(id, milliseconds(random() % 2));
            break;
          default:
            if (pool.cancel(id)) cancelled.fetch_add(1);
        }
      }
    });
    for (auto& t : threads) t.join();
    stop.store(true);
    poker.join();
    fence(pool);
    fence(pool);
  }
  // Every task either ran (once) or was cancelled before its run; a cancel
  // during a run counts in both.
  EXPECT_LE(runs.load(), kSchedulers * kPerThread);
  EXPECT_GE(runs.load() + cancelled.load(), kSchedulers * kPerThread);
}

// Tasks released by another thread while the pool is being destroyed: each
// destructor either unlinks its entry before the table goes or finds itself
// kDead is final. A worker that claimed a run a moment before the task was
// retired still sets kRunning (and kSnoozed after the run); that must not
// bring the task back from kDead (CI caught VBucketVisitorTask reading
// kRunning after unregisterTaskable()).
TEST(TaskState, DeadIsFinalWhateverIsSetAfterIt) {
  NullTaskable owner;
  auto task = idleTask(owner, 1);
  TaskAccess::setState(*task, TaskState::kRunning);
  EXPECT_EQ(TaskState::kRunning, task->state());
  TaskAccess::setState(*task, TaskState::kDead);
  TaskAccess::setState(*task, TaskState::kRunning);
  EXPECT_EQ(TaskState::kDead, task->state());
  TaskAccess::setState(*task, TaskState::kSnoozed);
  EXPECT_EQ(TaskState::kDead, task->state());
}

// Through the pool: a task that runs back to back, its owner unregistered at
// an arbitrary point of a run, must read kDead once unregisterTaskable()
// returns, whichever step of the claim the retire landed on.
TEST(ExecutorPool, ATaskIsDeadOnceItsOwnerIsUnregisteredMidRun) {
  ExecutorPool pool(2);
  for (int round = 0; round < 300; ++round) {
    NullTaskable owner;
    std::atomic<int> runs{0};
    auto task = std::make_shared<LambdaTask>(owner, [&runs](Task& self) {
      runs.fetch_add(1);
      return !self.taskable().isShutdown();
    });
    ASSERT_NE(kNoTask, pool.schedule(task));
    while (runs.load() < 1 + round % 3) std::this_thread::yield();
    pool.unregisterTaskable(owner);
    ASSERT_EQ(TaskState::kDead, task->state()) << "round " << round;
  }
}

// already detached.
TEST(ExecutorPool, TasksReleasedDuringThePoolsDestructionAreSafe) {
  NullTaskable owner;
  for (int round = 0; round < 10; ++round) {
    std::vector<std::shared_ptr<Task>> held;
    std::vector<std::weak_ptr<Task>> watch;
    auto pool = std::make_unique<ExecutorPool>(1);
    RunCounter runs;
    for (int i = 0; i < 500; ++i) {
      auto task = i % 2 == 0 ? std::shared_ptr<Task>(sleeper(owner, runs))
                             : std::make_shared<LambdaTask>(owner, [](Task&) { return false; });
      pool->schedule(task);
      watch.push_back(task);
      held.push_back(std::move(task));
    }
    std::latch go(2);
    std::thread releaser([&] {
      go.arrive_and_wait();
      for (auto& task : held) task.reset();
    });
    go.arrive_and_wait();
    pool.reset();
    releaser.join();
    for (const auto& w : watch) EXPECT_TRUE(w.expired());
    EXPECT_EQ(0, runs.count());
  }
}

}  // namespace
}  // namespace syncwrite::executor
