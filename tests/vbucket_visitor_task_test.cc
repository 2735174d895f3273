// VBucketVisitorTask on a real ExecutorPool: a pass visits each wanted
// vbucket exactly once however many times the (manual-clock) cap makes it
// yield, runAgain() runs further passes, and the task ends with its owner.
// Tests wait for events (a pass completing), never for time to pass.
#include <condition_variable>
#include <mutex>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "executor/executor_pool.h"
#include "vbucket/vbucket_visitor_task.h"

namespace syncwrite::vbucket {
namespace {

using std::chrono::milliseconds;
using testing::ElementsAreArray;

std::vector<Vbid> ids(std::initializer_list<Vbid> l) { return l; }
std::vector<Vbid> idsBelow(size_t n) {
  std::vector<Vbid> out;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<Vbid>(i));
  return out;
}

// Each visit moves the manual clock past the cap, so the task yields after
// every vbucket. Records the vbuckets visited in each pass.
class RecordingVisitor : public CappedDurationVBucketVisitor {
 public:
  explicit RecordingVisitor(clock::ManualClock& clock)
      : CappedDurationVBucketVisitor(clock::ClockRef::of(clock), milliseconds(5)), clock_(clock) {}

  void visitBucket(VBucket& vb) override {
    std::unique_lock lock(mutex_);
    current_.push_back(vb.id());
    if (hold_ && current_.size() == 1) {
      held_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return !hold_; });
    }
    clock_.advance(milliseconds(6));
  }
  void complete() override {
    std::lock_guard lock(mutex_);
    passes_.push_back(std::move(current_));
    current_.clear();
    changed_.notify_all();
  }

  // Blocks until `n` passes have completed; returns them.
  std::vector<std::vector<Vbid>> waitForPasses(size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return passes_.size() >= n; });
    return passes_;
  }
  // The next pass stops in its first visit until release().
  void holdNextPass() {
    std::lock_guard lock(mutex_);
    hold_ = true;
    held_ = false;
  }
  void waitUntilHeld() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return held_; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    hold_ = false;
    changed_.notify_all();
  }

 private:
  clock::ManualClock& clock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Vbid> current_;
  std::vector<std::vector<Vbid>> passes_;
  bool hold_ = false;
  bool held_ = false;
};

struct Fixture {
  explicit Fixture(size_t vbuckets, VBucketState state = VBucketState::kActive)
      : map(vbuckets, state) {}
  ~Fixture() { pool.unregisterTaskable(owner); }

  std::shared_ptr<VBucketVisitorTask> makeTask(StateFilter filter = StateFilter::all(),
                                               clock::Duration interval = clock::Duration::max()) {
    auto v = std::make_unique<RecordingVisitor>(clock);
    visitor = v.get();
    return std::make_shared<VBucketVisitorTask>(owner, pool, "visitor", map, std::move(v), filter,
                                                interval);
  }

  clock::ManualClock clock;
  executor::NullTaskable owner;
  VBucketMap map;
  executor::ExecutorPool pool{2};
  RecordingVisitor* visitor = nullptr;
};

TEST(VBucketVisitorTask, YieldsAfterEveryCappedChunkAndVisitsEachVBucketOnce) {
  Fixture f(64);
  auto task = f.makeTask();
  ASSERT_NE(f.pool.schedule(task), executor::kNoTask);
  auto passes = f.visitor->waitForPasses(1);
  EXPECT_THAT(passes[0], ElementsAreArray(idsBelow(64)));
  f.pool.unregisterTaskable(f.owner);  // returns once the task is not running
  EXPECT_EQ(task->passesCompleted(), 1u);
  EXPECT_EQ(task->chunksRun(), 64u) << "one vbucket per chunk: the cap forced a yield each time";
}

TEST(VBucketVisitorTask, VisitsOnlyVBucketsInAWantedState) {
  Fixture f(12, VBucketState::kReplica);
  for (Vbid id : {2, 3, 11}) f.map.at(id).setState(VBucketState::kActive);
  f.map.at(5).setState(VBucketState::kDead);
  auto task = f.makeTask({VBucketState::kActive});
  f.pool.schedule(task);
  EXPECT_THAT(f.visitor->waitForPasses(1)[0], ElementsAreArray(ids({2, 3, 11})));
  f.pool.unregisterTaskable(f.owner);
  EXPECT_EQ(task->chunksRun(), 3u);
}

TEST(VBucketVisitorTask, RunAgainRunsAnotherFullPass) {
  Fixture f(16);
  auto task = f.makeTask();
  f.pool.schedule(task);
  f.visitor->waitForPasses(1);
  task->runAgain();
  auto passes = f.visitor->waitForPasses(2);
  EXPECT_THAT(passes[1], ElementsAreArray(idsBelow(16)));
}

TEST(VBucketVisitorTask, RunAgainDuringAPassLetsItFinishThenRunsOneMore) {
  Fixture f(16);
  auto task = f.makeTask();
  f.visitor->holdNextPass();
  f.pool.schedule(task);
  f.visitor->waitUntilHeld();  // the first pass is in its first visit
  task->runAgain();
  task->runAgain();  // coalesces with the first request
  f.visitor->release();
  auto passes = f.visitor->waitForPasses(2);
  EXPECT_THAT(passes[0], ElementsAreArray(idsBelow(16))) << "not restarted part-way";
  EXPECT_THAT(passes[1], ElementsAreArray(idsBelow(16)));
  // One more request gives exactly one more pass (the third), not a backlog.
  task->runAgain();
  passes = f.visitor->waitForPasses(3);
  EXPECT_EQ(passes.size(), 3u);
  EXPECT_THAT(passes[2], ElementsAreArray(idsBelow(16)));
}

TEST(VBucketVisitorTask, PeriodicTaskRunsPassAfterPass) {
  Fixture f(8);
  auto task = f.makeTask(StateFilter::all(), clock::Duration::zero());
  f.pool.schedule(task);
  auto passes = f.visitor->waitForPasses(3);
  for (size_t i = 0; i < 3; ++i) EXPECT_THAT(passes[i], ElementsAreArray(idsBelow(8)));
}

TEST(VBucketVisitorTask, PeriodicPassesStartOnMultiplesOfTheInterval) {
  Fixture f(8);
  const milliseconds interval(3'600'000);  // an hour: the second pass never comes here
  auto task = f.makeTask(StateFilter::all(), interval);
  const auto before = std::chrono::steady_clock::now().time_since_epoch();
  f.pool.schedule(task);
  f.visitor->waitForPasses(1);
  f.pool.unregisterTaskable(f.owner);  // returns once the first pass's run has ended
  const auto wake = task->wakeTime().time_since_epoch();
  EXPECT_EQ(wake % interval, clock::Duration::zero())
      << "every bucket's pass starts on the same instants, not an interval after its last";
  EXPECT_GT(wake, before);
}

TEST(VBucketVisitorTask, EndsWhenItsOwnerIsShutDown) {
  Fixture f(8);
  auto task = f.makeTask(StateFilter::all(), clock::Duration::zero());
  f.pool.schedule(task);
  f.visitor->waitForPasses(1);
  f.pool.unregisterTaskable(f.owner);
  EXPECT_EQ(task->state(), executor::TaskState::kDead);
  const uint64_t passes = task->passesCompleted();
  task->runAgain();  // harmless: the task is gone
  EXPECT_EQ(task->passesCompleted(), passes);
}

}  // namespace
}  // namespace syncwrite::vbucket
