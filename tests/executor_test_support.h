// Shared by the executor tests: tasks built from lambdas or mocks, a run
// counter to wait on, a fence and a blocker for one-worker pools.
//
// No timing assertions and no sleeping to wait for something: tests wait on
// conditions with a generous bound that only guards against hanging. To show
// that something did *not* run, tests use a one-worker pool and a fence: a
// one-shot task scheduled afterwards. The ready queue is FIFO, so when the
// fence has run, every run queued before it has run too.
#pragma once

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
#include "tests/thread_name.h"

namespace syncwrite::executor::test {

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
             clock::TimePoint initial_wake = clock::TimePoint{}, DueRun due_run = DueRun::kWorker)
      : Task(owner, "lambda", TaskGroup::kNonIO, initial_wake, due_run), fn_(std::move(fn)) {}
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
inline std::shared_ptr<LambdaTask> sleeper(Taskable& owner, RunCounter& runs,
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

using syncwrite::test::threadName;

// Counts runs of a task that began while another run of it was in progress.
struct OverlapCounter {
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
};

// A task that records, in `overlap`, each run that overlaps another of its
// own, then snoozes for `period` (Duration::max(): until woken) and counts
// the run in `runs`.
inline std::shared_ptr<LambdaTask> overlapProbe(Taskable& owner, OverlapCounter& overlap,
                                                RunCounter& runs, clock::Duration period,
                                                clock::TimePoint initial_wake,
                                                DueRun due_run = DueRun::kWorker) {
  return std::make_shared<LambdaTask>(
      owner,
      [&overlap, &runs, period](Task& self) {
        if (overlap.inside.exchange(true)) overlap.overlaps.fetch_add(1);
        self.snooze(period);
        overlap.inside.store(false);
        runs.add();
        return true;
      },
      initial_wake, due_run);
}

// Waits until every run queued so far on a one-worker pool has happened.
inline void fence(ExecutorPool& pool) {
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

}  // namespace syncwrite::executor::test
