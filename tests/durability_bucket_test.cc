// BucketDurability: SyncWrites through a real executor, in both timeout
// modes, with time driven by a manual clock (checkTimeoutsNow() makes the
// tasks look; nothing sleeps for a deadline).
#include "durability/bucket_durability.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "clock/coarse_clock.h"
#include "clock/manual_clock.h"
#include "clock/precise_clock.h"
#include "durability/bucket_timeout_task.h"
#include "tests/durability_test_support.h"
#include "tests/thread_name.h"
#include "vbucket/vbucket_set.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::Recorder;
using vbucket::VBucketState;

constexpr size_t kVBuckets = 4;

std::string modeName(TimeoutMode mode) { return std::string(toString(mode)); }

class BucketDurabilityTest : public ::testing::TestWithParam<TimeoutMode> {
 protected:
  BucketDurabilityTest() {
    EXPECT_TRUE(config_
                    .loadJson({{"max_vbuckets", kVBuckets},
                               {"bucket_type", "couchbase"},
                               {"durability_timeout_mode", modeName(GetParam())}})
                    .ok());
    map_ = std::make_unique<vbucket::VBucketMap>(config_, VBucketState::kActive);
    bucket_ = std::make_unique<BucketDurability>(
        "test", config_, *map_, pool_, testing::chainOf({"replica1"}), clock::ClockRef::of(clock_));
  }
  ~BucketDurabilityTest() override { bucket_.reset(); }

  WriteResult write(Vbid vb, const std::string& key, std::optional<Timeout> timeout = std::nullopt,
                    Level level = Level::kMajority) {
    WriteRequest request{WriteOp::kSet, key, "v", 1,
                         Requirements{level, timeout.value_or(Timeout::bucketDefault())}};
    return bucket_->write(vb, request, recorder_.completion(key));
  }
  WriteResult writePlain(Vbid vb, const std::string& key) {
    return bucket_->write(vb, WriteRequest{WriteOp::kSet, key, "v", 1, std::nullopt},
                          recorder_.completion(key));
  }

  // Makes the current mode look for expired writes and waits until it has
  // looked at least once after this call.
  void checkTimeouts() {
    const DurabilityStats before = bucket_->stats();
    if (bucket_->mode() == TimeoutMode::kPolling) {
      // A pass under way may have read the clock before it moved. The pass
      // asked for after one has ended started after this call.
      bucket_->checkTimeoutsNow();
      ASSERT_TRUE(
          eventually([&] { return bucket_->stats().polling_passes >= before.polling_passes + 1; }));
      bucket_->checkTimeoutsNow();
      ASSERT_TRUE(
          eventually([&] { return bucket_->stats().polling_passes >= before.polling_passes + 2; }));
      return;
    }
    // One run serves every vbucket.
    size_t armed = 0;
    for (Vbid vb = 0; vb < kVBuckets; ++vb) armed = bucket_->inFlight(vb) > 0 ? 1 : armed;
    bucket_->checkTimeoutsNow();
    ASSERT_TRUE(eventually(
        [&] { return bucket_->stats().timeout_task_runs >= before.timeout_task_runs + armed; }));
  }

  void setMode(TimeoutMode mode) {
    ASSERT_TRUE(config_.setFromText("durability_timeout_mode", modeName(mode)).ok());
    ASSERT_EQ(bucket_->mode(), mode);
  }

  clock::ManualClock clock_;
  executor::ExecutorPool pool_{2};
  config::Configuration config_{config::Scope::kBucket};
  std::unique_ptr<vbucket::VBucketMap> map_;
  Recorder recorder_;
  std::unique_ptr<BucketDurability> bucket_;
};

INSTANTIATE_TEST_SUITE_P(BothModes, BucketDurabilityTest,
                         ::testing::Values(TimeoutMode::kEventDriven, TimeoutMode::kPolling),
                         [](const auto& info) {
                           return info.param == TimeoutMode::kPolling ? "Polling" : "EventDriven";
                         });

TEST_P(BucketDurabilityTest, StartsInTheConfiguredMode) {
  EXPECT_EQ(bucket_->mode(), GetParam());
  EXPECT_EQ(bucket_->stats().timeout_tasks, 1u) << "one per bucket in either mode";
}

TEST_P(BucketDurabilityTest, MajorityWriteCommitsWhenTheReplicaAcks) {
  const WriteResult r = write(1, "k");
  ASSERT_EQ(r.status, WriteStatus::kPending);
  EXPECT_TRUE(bucket_->seqnoAcknowledged(1, "replica1", r.seqno));
  ASSERT_EQ(recorder_.size(), 1u) << "an ack completes on the acking thread";
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
  EXPECT_NE(map_->at(1).hashTable().find("k"), nullptr);
  EXPECT_FALSE(bucket_->seqnoAcknowledged(1, "nobody", r.seqno));
  EXPECT_FALSE(bucket_->seqnoAcknowledged(99, "replica1", r.seqno));
}

TEST_P(BucketDurabilityTest, PersistenceLevelsWaitForLocalPersistence) {
  const WriteResult r = write(0, "k", std::nullopt, Level::kMajorityAndPersistOnMaster);
  bucket_->seqnoAcknowledged(0, "replica1", r.seqno);
  EXPECT_EQ(recorder_.size(), 0u);
  bucket_->notifyLocalPersistence(0, r.seqno);
  EXPECT_EQ(recorder_.size(), 1u);
}

TEST_P(BucketDurabilityTest, AWriteTimesOutOnlyOnceItsDeadlineHasPassed) {
  ASSERT_EQ(write(2, "k", Timeout::fromMillis(100)).status, WriteStatus::kPending);
  clock_.advance(100ms);
  checkTimeouts();
  EXPECT_EQ(recorder_.size(), 0u) << "aborted early";
  EXPECT_EQ(bucket_->inFlight(2), 1u);

  clock_.advance(1ms);
  bucket_->checkTimeoutsNow();
  ASSERT_TRUE(recorder_.waitFor(1));
  const Resolution res = recorder_.entries()[0].resolution;
  EXPECT_FALSE(res.committed);
  EXPECT_EQ(res.reason, AmbiguousReason::kTimeout);
  EXPECT_EQ(res.vbid, 2);
  EXPECT_EQ(bucket_->stats().aborted_timeout, 1u);
}

// The fence: a write ahead of the infinite one, in the same vbucket, that does
// time out. The timeout that aborts it looks at the write behind it in the
// same call, under the monitor's lock (the expired prefix), so once the
// fence's completion has arrived that look is over and the infinite write is
// still tracked. The bucket's deletion then answers it kBucketDeleted: had any
// look timed it out, its one answer would have been kTimeout.
TEST_P(BucketDurabilityTest, InfiniteTimeoutNeverExpires) {
  ASSERT_EQ(write(0, "fence", Timeout::fromMillis(1)).status, WriteStatus::kPending);
  ASSERT_EQ(write(0, "infinite", Timeout::infinite()).status, WriteStatus::kPending);
  clock_.advance(std::chrono::hours(1000));
  bucket_->checkTimeoutsNow();
  ASSERT_TRUE(recorder_.waitFor(1));
  EXPECT_EQ(recorder_.entries()[0].tag, "fence");
  EXPECT_EQ(recorder_.entries()[0].resolution.reason, AmbiguousReason::kTimeout);
  EXPECT_EQ(bucket_->inFlight(0), 1u) << "the infinite write was aborted with the fence";
  EXPECT_EQ(bucket_->headDeadline(0), clock::kNever);

  clock_.advance(std::chrono::hours(1000));
  checkTimeouts();
  bucket_.reset();  // stops the tasks, waiting for a running one, then answers the rest
  ASSERT_EQ(recorder_.size(), 2u);
  EXPECT_EQ(recorder_.entries()[1].tag, "infinite");
  EXPECT_EQ(recorder_.entries()[1].resolution.reason, AmbiguousReason::kBucketDeleted)
      << "the infinite write timed out";
}

TEST_P(BucketDurabilityTest, DefaultTimeoutAndMinLevelFollowTheConfig) {
  ASSERT_TRUE(config_.setFromText("durability_default_timeout", "50").ok());
  const auto now = clock_.now();
  write(0, "k");
  EXPECT_EQ(bucket_->headDeadline(0), now + 50ms);

  EXPECT_EQ(writePlain(1, "plain").status, WriteStatus::kCommitted);
  ASSERT_TRUE(config_.setFromText("durability_min_level", "majority").ok());
  EXPECT_EQ(writePlain(1, "upgraded").status, WriteStatus::kPending);
}

TEST_P(BucketDurabilityTest, LeavingActiveAnswersEveryWriteAmbiguous) {
  write(3, "a");
  write(3, "b");
  write(0, "other");
  map_->at(3).setState(VBucketState::kReplica);
  ASSERT_EQ(recorder_.size(), 2u) << "answered on the thread that changed the state";
  for (const auto& e : recorder_.entries()) {
    EXPECT_EQ(e.resolution.reason, AmbiguousReason::kLeftActive);
    EXPECT_EQ(e.resolution.vbid, 3);
  }
  EXPECT_EQ(write(3, "c").status, WriteStatus::kNotActive);
  EXPECT_EQ(bucket_->inFlight(0), 1u) << "other vbuckets are untouched";

  map_->at(3).setState(VBucketState::kActive);
  EXPECT_EQ(write(3, "a").status, WriteStatus::kPending);
}

TEST_P(BucketDurabilityTest, DeletingTheBucketAnswersEveryWriteAmbiguous) {
  write(0, "a");
  write(1, "b");
  bucket_.reset();
  ASSERT_EQ(recorder_.size(), 2u);
  for (const auto& e : recorder_.entries()) {
    EXPECT_EQ(e.resolution.reason, AmbiguousReason::kBucketDeleted);
  }
}

TEST_P(BucketDurabilityTest, ShutdownAnswersAmbiguousStopsTasksAndRefusesLaterWrites) {
  write(0, "a");
  bucket_->shutdown(AmbiguousReason::kShutdown);
  ASSERT_EQ(recorder_.size(), 1u);
  EXPECT_EQ(recorder_.entries()[0].resolution.reason, AmbiguousReason::kShutdown);
  EXPECT_EQ(write(0, "b").status, WriteStatus::kNotActive);
  EXPECT_EQ(writePlain(0, "c").status, WriteStatus::kNotActive);
  EXPECT_EQ(bucket_->stats().timeout_tasks, 0u);
  bucket_->shutdown(AmbiguousReason::kShutdown);  // idempotent
  bucket_.reset();
  EXPECT_EQ(recorder_.size(), 1u) << "nothing answered twice";
}

// The first caller answers the writes after dropping its lock; a second
// caller meanwhile must not return before those answers are given.
TEST_P(BucketDurabilityTest, ASecondConcurrentShutdownReturnsOnlyOnceEveryWriteIsAnswered) {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  WriteRequest request{WriteOp::kSet, "blocking", "v", 1,
                       Requirements{Level::kMajority, Timeout::infinite()}};
  ASSERT_EQ(bucket_
                ->write(0, request,
                        [&entered, released](const Resolution&) {
                          entered.set_value();
                          released.wait();
                        })
                .status,
            WriteStatus::kPending);
  write(1, "other");
  std::thread first([&] { bucket_->shutdown(AmbiguousReason::kShutdown); });
  entered.get_future().wait();  // the first caller is answering, its lock dropped
  std::atomic<bool> second_returned{false};
  std::thread second([&] {
    bucket_->shutdown(AmbiguousReason::kShutdown);
    second_returned = true;
  });
  std::this_thread::sleep_for(50ms);  // time for a wrong early return to show
  EXPECT_FALSE(second_returned) << "returned while a write was still being answered";
  release.set_value();
  first.join();
  second.join();
  EXPECT_TRUE(second_returned);
  EXPECT_EQ(recorder_.size(), 1u) << "the other write was answered before either returned";
}

TEST_P(BucketDurabilityTest, SwitchingModeWithWritesInFlightKeepsEveryDeadline) {
  const TimeoutMode other =
      GetParam() == TimeoutMode::kPolling ? TimeoutMode::kEventDriven : TimeoutMode::kPolling;
  write(0, "first", Timeout::fromMillis(100));
  write(1, "second", Timeout::fromMillis(300));
  write(1, "third", Timeout::fromMillis(200));  // behind "second": waits for it

  setMode(other);
  EXPECT_EQ(bucket_->stats().mode_switches, 1u);
  clock_.advance(100ms);
  checkTimeouts();
  EXPECT_EQ(recorder_.size(), 0u) << "none aborted early";

  clock_.advance(50ms);
  bucket_->checkTimeoutsNow();
  ASSERT_TRUE(recorder_.waitFor(1));
  EXPECT_EQ(recorder_.entries()[0].tag, "first");

  setMode(GetParam());    // and back, with writes still in flight
  clock_.advance(151ms);  // 301 ms
  bucket_->checkTimeoutsNow();
  ASSERT_TRUE(recorder_.waitFor(3));
  EXPECT_EQ(recorder_.entries()[1].tag, "second");
  EXPECT_EQ(recorder_.entries()[2].tag, "third");

  checkTimeouts();
  EXPECT_EQ(recorder_.size(), 3u) << "none answered twice";
  EXPECT_EQ(bucket_->stats().aborted_timeout, 3u);
}

TEST_P(BucketDurabilityTest, TheRightTasksExistAcrossModeAndStateChanges) {
  setMode(TimeoutMode::kEventDriven);
  EXPECT_EQ(bucket_->stats().timeout_tasks, 1u);
  EXPECT_EQ(bucket_->timerSlack(), TimeoutClocks::kDefaultTimerSlack);
  map_->at(2).setState(VBucketState::kReplica);
  EXPECT_EQ(bucket_->stats().timeout_tasks, 1u) << "one timer whichever vbuckets are active";
  setMode(TimeoutMode::kPolling);
  EXPECT_EQ(bucket_->stats().timeout_tasks, 1u);
  EXPECT_EQ(bucket_->timerSlack(), clock::Duration::max());
  map_->at(2).setState(VBucketState::kActive);
  EXPECT_EQ(bucket_->stats().timeout_tasks, 1u) << "polling adds no per-vbucket task";
  setMode(TimeoutMode::kEventDriven);
  EXPECT_EQ(bucket_->stats().timeout_tasks, 1u);
  EXPECT_EQ(bucket_->pollingInterval(), clock::Duration::max());
}

// The in-flight set holds exactly the vbuckets with writes, whichever way
// their last write leaves, and across mode switches.
TEST_P(BucketDurabilityTest, TheInFlightSetFollowsFirstPendingAndLastResolved) {
  auto inSet = [&](Vbid vb) { return bucket_->inFlightSetHas(vb); };
  EXPECT_FALSE(inSet(0));
  writePlain(0, "plain");
  EXPECT_FALSE(inSet(0)) << "a plain write is not in flight";
  const WriteResult a = write(0, "a", Timeout::fromMillis(100));
  const WriteResult b = write(0, "b", Timeout::fromMillis(300));
  write(1, "c", Timeout::fromMillis(100));
  write(2, "d", Timeout::fromMillis(100));
  write(3, "e", Timeout::fromMillis(50));
  write(3, "f", Timeout::fromMillis(1000));  // behind e
  EXPECT_EQ(write(0, "a").status, WriteStatus::kSyncWriteInProgress);
  EXPECT_TRUE(inSet(0) && inSet(1) && inSet(2) && inSet(3));

  bucket_->seqnoAcknowledged(0, "replica1", a.seqno);
  EXPECT_TRUE(inSet(0)) << "b is still in flight";
  bucket_->seqnoAcknowledged(0, "replica1", b.seqno);
  EXPECT_FALSE(inSet(0)) << "the last commit takes it out";

  const TimeoutMode other =
      GetParam() == TimeoutMode::kPolling ? TimeoutMode::kEventDriven : TimeoutMode::kPolling;
  setMode(other);
  EXPECT_TRUE(inSet(1) && inSet(2) && inSet(3)) << "a mode switch keeps the set";
  clock_.advance(101ms);
  checkTimeouts();
  ASSERT_TRUE(recorder_.waitFor(5));  // a, b committed; c, d, e timed out
  EXPECT_FALSE(inSet(1)) << "the last abort takes it out";
  EXPECT_FALSE(inSet(2));
  EXPECT_TRUE(inSet(3)) << "f is still in flight";

  map_->at(3).setState(VBucketState::kReplica);
  EXPECT_FALSE(inSet(3)) << "leaving active takes it out";
  EXPECT_EQ(recorder_.size(), 6u);
  setMode(GetParam());
  write(1, "g");
  EXPECT_TRUE(inSet(1));
  bucket_->flush();
  EXPECT_FALSE(inSet(1)) << "flush answers it and takes it out";
}

TEST_P(BucketDurabilityTest, AWriteSatisfiedWhenAddedCompletesOnAPoolThread) {
  bucket_->setTopology(testing::chainOf({}));
  const WriteResult r = write(0, "k");
  ASSERT_EQ(r.status, WriteStatus::kPending);
  ASSERT_TRUE(recorder_.waitFor(1));
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
  EXPECT_NE(recorder_.entries()[0].thread, std::this_thread::get_id())
      << "never called from inside the call that added it";
}

TEST_P(BucketDurabilityTest, ANewTopologyCommitsWhatItSatisfies) {
  write(0, "k");
  EXPECT_EQ(recorder_.size(), 0u);
  bucket_->setTopology(testing::chainOf({}));
  EXPECT_EQ(recorder_.size(), 1u);
  EXPECT_EQ(bucket_->topology().chains()[0].replicas.size(), 0u);
}

// A rebalance adds replica2: it acks the prepare before the topology that
// names it arrives, and would not ack again without a new prepare. The ack
// is kept and counts once setTopology() adds the node, as kv_engine's
// queuedSeqnoAcks (it used to be dropped, and the write to time out).
TEST_P(BucketDurabilityTest, AnAckThatArrivesBeforeTheTopologyNamingItsNodeCounts) {
  const WriteResult w = write(0, "k");
  EXPECT_FALSE(bucket_->seqnoAcknowledged(0, "replica2", w.seqno)) << "not in the topology yet";
  bucket_->setTopology(ReplicationTopology::create({ReplicationChain{"active", {"replica1"}},
                                                    ReplicationChain{"active", {"replica2"}}})
                           .value());
  EXPECT_EQ(recorder_.size(), 0u) << "the first chain still needs replica1";
  EXPECT_TRUE(bucket_->seqnoAcknowledged(0, "replica1", w.seqno));
  ASSERT_EQ(recorder_.size(), 1u);
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
}

// Event-driven only.
class EventDrivenTest : public BucketDurabilityTest {};
INSTANTIATE_TEST_SUITE_P(EventDriven, EventDrivenTest,
                         ::testing::Values(TimeoutMode::kEventDriven));

TEST_P(EventDrivenTest, TheTimerIsArmedToTheEarliestDeadlineOfTheBucket) {
  const auto t0 = clock_.now();
  EXPECT_EQ(bucket_->armedDeadline(), clock::kNever);
  write(0, "a", Timeout::fromMillis(100));
  EXPECT_EQ(bucket_->armedDeadline(), t0 + 100ms);
  const WriteResult b = write(0, "b", Timeout::fromMillis(50));
  EXPECT_EQ(bucket_->armedDeadline(), t0 + 50ms) << "re-armed for the write behind the head";
  write(1, "c", Timeout::fromMillis(70));
  EXPECT_EQ(bucket_->armedDeadline(), t0 + 50ms) << "a later deadline elsewhere: not re-armed";
  const WriteResult d = write(2, "d", Timeout::fromMillis(30));
  EXPECT_EQ(bucket_->armedDeadline(), t0 + 30ms) << "an earlier one in any vbucket re-arms";
  EXPECT_EQ(bucket_->stats().timeout_rearms, 3u);

  bucket_->seqnoAcknowledged(2, "replica1", d.seqno);
  EXPECT_EQ(bucket_->armedDeadline(), t0 + 30ms) << "a later deadline is found when it runs";
  checkTimeouts();
  EXPECT_EQ(bucket_->armedDeadline(), t0 + 50ms) << "the run re-armed for the bucket's earliest";
  bucket_->seqnoAcknowledged(0, "replica1", b.seqno);  // a and b commit
  clock_.advance(71ms);
  checkTimeouts();  // c times out
  ASSERT_TRUE(recorder_.waitFor(4));
  EXPECT_EQ(bucket_->armedDeadline(), clock::kNever) << "asleep forever when idle";
  EXPECT_EQ(bucket_->stats().aborted_timeout, 1u);
}

TEST_P(EventDrivenTest, AnIdleBucketRunsNoTimeoutTask) {
  // Writes that commit before their deadline arm and disarm the timer but
  // never run it.
  for (int i = 0; i < 10; ++i) {
    const WriteResult r = write(static_cast<Vbid>(i % kVBuckets), "k" + std::to_string(i));
    bucket_->seqnoAcknowledged(static_cast<Vbid>(i % kVBuckets), "replica1", r.seqno);
  }
  // A probe queued behind anything due: once it has run, any timeout task
  // that was due has run too.
  std::atomic<bool> probed{false};
  struct Probe : executor::Task {
    Probe(executor::Taskable& o, std::atomic<bool>& f) : Task(o, "probe"), flag(f) {}
    bool run() override {
      flag.store(true);
      return false;
    }
    std::atomic<bool>& flag;
  };
  executor::NullTaskable owner;
  pool_.schedule(std::make_shared<Probe>(owner, probed));
  ASSERT_TRUE(eventually([&] { return probed.load(); }));
  EXPECT_EQ(bucket_->stats().timeout_task_runs, 0u);
  EXPECT_EQ(recorder_.size(), 10u);
  pool_.unregisterTaskable(owner);
}

// Polling only.
class PollingTest : public BucketDurabilityTest {};
INSTANTIATE_TEST_SUITE_P(Polling, PollingTest, ::testing::Values(TimeoutMode::kPolling));

TEST_P(PollingTest, AnIntervalChangeTakesEffectAtOnce) {
  EXPECT_EQ(bucket_->pollingInterval(), 25ms);
  ASSERT_TRUE(config_.setFromText("durability_timeout_task_interval", "60000").ok());
  EXPECT_EQ(bucket_->pollingInterval(), 60000ms);
  // With a minute between passes, passes now come only when asked for...
  checkTimeouts();
  // ...and a short interval brings them back without asking.
  ASSERT_TRUE(config_.setFromText("durability_timeout_task_interval", "1").ok());
  const uint64_t passes = bucket_->stats().polling_passes;
  EXPECT_TRUE(eventually([&] { return bucket_->stats().polling_passes >= passes + 5; }));
}

// The key reaches the running visitor, and a polling task started later
// (after a switch away and back) starts with its current value. That the
// visitor then pauses at the new maximum is CappedDurationVBucketVisitor's
// own test (vbucket_visitor_test.cc).
TEST_P(PollingTest, AMaxVisitDurationChangeTakesEffectAtOnce) {
  EXPECT_EQ(bucket_->pollingMaxChunkDuration(), 25ms);
  ASSERT_TRUE(config_.setFromText("max_vbucket_visit_duration", "1").ok());
  EXPECT_EQ(bucket_->pollingMaxChunkDuration(), 1ms);

  setMode(TimeoutMode::kEventDriven);
  EXPECT_EQ(bucket_->pollingMaxChunkDuration(), clock::Duration::max());
  ASSERT_TRUE(config_.setFromText("max_vbucket_visit_duration", "7").ok());
  setMode(TimeoutMode::kPolling);
  EXPECT_EQ(bucket_->pollingMaxChunkDuration(), 7ms);

  write(0, "k", Timeout::fromMillis(10));
  clock_.advance(11ms);
  bucket_->checkTimeoutsNow();
  EXPECT_TRUE(recorder_.waitFor(1));
}

// The production clock: event-driven timeouts on the coarse clock, which lags
// real time (by a tick or more). A write whose deadline passes must be aborted
// after a few timer runs, not after a spin of re-runs until the clock catches
// up. A deadline still ahead in real time takes the absolute re-arm; one the
// coarse clock has not reached yet, the relative one.
TEST(CoarseClockTimeouts, AnExpiringWriteTakesAFewTimerRunsNotASpin) {
  config::Configuration config(config::Scope::kBucket);
  ASSERT_TRUE(
      config.loadJson({{"max_vbuckets", 1}, {"durability_timeout_mode", "event-driven"}}).ok());
  vbucket::VBucketMap map(config, VBucketState::kActive);
  executor::ExecutorPool pool(1);
  BucketDurability bucket("coarse", config, map, pool, testing::chainOf({"replica1"}),
                          clock::ClockRef::of<clock::CoarseClock>());
  Recorder recorder;
  const std::vector<uint16_t> timeouts_ms = {1, 1, 2, 5, 300};
  for (size_t i = 0; i < timeouts_ms.size(); ++i) {
    const std::string key = "k" + std::to_string(i);
    const Requirements requirements{Level::kMajority, *Timeout::fromMillis(timeouts_ms[i])};
    ASSERT_EQ(bucket
                  .write(0, WriteRequest{WriteOp::kSet, key, "v", 1, requirements},
                         recorder.completion(key))
                  .status,
              WriteStatus::kPending);
    ASSERT_TRUE(recorder.waitFor(i + 1));
  }
  EXPECT_EQ(bucket.stats().aborted_timeout, timeouts_ms.size());
  // One run per write when the clock has moved past the deadline by the time
  // the timer fires; a stale clock may cost a few more, each after kMinSleep.
  // A spin would be thousands.
  EXPECT_LE(bucket.stats().timeout_task_runs, timeouts_ms.size() * 10);
  bucket.shutdown(AmbiguousReason::kShutdown);
}

// The timer slack, on the real clock: deadlines of different vbuckets that
// fall in one slot share one run, and that run comes after every one of them.
// (Only "after" is asserted of the time: no upper bound.) The run is the
// timer's, so it runs on the executor's timer thread (DueRun::kTimerThread),
// and the completions with it.
TEST(CoalescedTimeouts, DeadlinesInOneSlotShareOneRunAndNoneFiresEarly) {
  constexpr clock::Duration kSlack = 100ms;
  constexpr Vbid kCount = 4;
  vbucket::VBucketMap map(kCount, VBucketState::kActive);
  vbucket::VBucketSet in_flight(map.size());
  DurabilitySettings settings;
  std::vector<std::unique_ptr<ActiveDurabilityMonitor>> monitors;
  for (Vbid vb = 0; vb < kCount; ++vb) {
    monitors.push_back(std::make_unique<ActiveDurabilityMonitor>(
        map.at(vb), settings, testing::chainOf({"replica1"}), &in_flight));
  }
  executor::ExecutorPool pool(1);
  executor::NullTaskable owner;
  TimeoutTaskCounters counters;
  auto task = std::make_shared<BucketTimeoutTask>(
      owner, pool, in_flight, [&](Vbid vb) -> ActiveDurabilityMonitor& { return *monitors[vb]; },
      clock::ClockRef::of<clock::PreciseClock>(), kSlack, /*max_slice=*/std::chrono::seconds(10),
      counters);
  ASSERT_NE(pool.schedule(task), executor::kNoTask);
  for (auto& m : monitors) m->setDeadlineListener(task.get());
  EXPECT_EQ(counters.runs.load(), 0u) << "attached to idle monitors, it runs nothing";

  // A slot boundary at least 50 ms ahead; deadlines 1..4 ms before it. The
  // deadline is the stamp passed to write() plus the timeout.
  const clock::Duration::rep slot = kSlack.count();
  const clock::TimePoint boundary{clock::Duration(
      ((clock::PreciseClock::now() + 50ms).time_since_epoch().count() / slot + 1) * slot)};
  base::Mutex mu;
  std::vector<std::pair<clock::TimePoint, clock::TimePoint>> answered;  // deadline, answer
  std::vector<std::string> threads;                                     // where each completion ran
  for (Vbid vb = 0; vb < kCount; ++vb) {
    const clock::TimePoint deadline = boundary - std::chrono::milliseconds(vb + 1);
    ResolvedWrites resolved;
    const WriteResult r = monitors[vb]->write(
        WriteRequest{WriteOp::kSet, "k", "v", 1,
                     Requirements{Level::kMajority, *Timeout::fromMillis(10)}},
        [&, deadline](const Resolution&) {
          const clock::TimePoint at = clock::PreciseClock::now();
          std::string name = syncwrite::test::threadName();
          base::MutexLock lock(mu);
          answered.emplace_back(deadline, at);
          threads.push_back(std::move(name));
        },
        deadline - 10ms, resolved);
    ASSERT_EQ(r.status, WriteStatus::kPending);
    EXPECT_TRUE(in_flight.contains(vb));
  }
  EXPECT_EQ(task->armedDeadline(), boundary - 4ms);
  ASSERT_TRUE(eventually([&] {
    base::MutexLock lock(mu);
    return answered.size() == kCount;
  }));
  ASSERT_TRUE(eventually([&] { return counters.runs.load() >= 1; }));
  EXPECT_EQ(counters.runs.load(), 1u) << "one run for the slot";
  for (const auto& [deadline, at] : answered) EXPECT_GT(at, deadline) << "never early";
  {
    base::MutexLock lock(mu);
    EXPECT_EQ(threads, std::vector<std::string>(kCount, "NonIoTimer"));
  }
  EXPECT_TRUE(in_flight.empty());
  EXPECT_EQ(task->armedDeadline(), clock::kNever);
  for (auto& m : monitors) m->setDeadlineListener(nullptr);
  pool.unregisterTaskable(owner);
}

}  // namespace
}  // namespace syncwrite::durability
