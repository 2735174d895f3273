// A timeout storm through BucketDurability: 100,000 SyncWrites across 1,024
// vbuckets whose deadlines pass at one instant (a replica died). Time is a
// manual clock: every completion advances it, as answering a write costs real
// time, so a slice of the event-driven timer (durability_timeout_slice) ends
// after a bounded number of answers and the rest wait for the next one.
//
// What it pins: every write resolved exactly once, ambiguous (timeout), with
// an abort queued for it; within each vbucket in seqno order; the
// event-driven timer yielded in slices of at most a slice's worth of answers
// (plus the rest of the vbucket it was in) instead of one run; polling
// resolves the same storm the same way; and the lateness stats say how long
// after the deadline the answers went out.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "clock/manual_clock.h"
#include "durability/bucket_durability.h"
#include "durability/bucket_timeout_task.h"
#include "tests/durability_test_support.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using vbucket::VBucketState;

constexpr size_t kStormVBuckets = 1024;
constexpr size_t kWrites = 100'000;
// What one answer costs on the manual clock, and the slice: about 2,000
// answers a slice, so at least ~48 slices.
constexpr clock::Duration kPerAnswer = 1us;
constexpr int kSliceMs = 2;

class DurabilityStormTest : public ::testing::TestWithParam<TimeoutMode> {
 protected:
  DurabilityStormTest() {
    EXPECT_TRUE(config_
                    .loadJson({{"max_vbuckets", kStormVBuckets},
                               {"durability_timeout_mode", std::string(toString(GetParam()))},
                               {"durability_timeout_slice", kSliceMs}})
                    .ok());
    map_ = std::make_unique<vbucket::VBucketMap>(config_, VBucketState::kActive);
    bucket_ = std::make_unique<BucketDurability>("storm", config_, *map_, pool_,
                                                 testing::chainOf({"replica1"}),
                                                 clock::ClockRef::of(clock_));
  }
  ~DurabilityStormTest() override { bucket_.reset(); }

  struct Answer {
    Resolution resolution;
    uint64_t write;  // the index the test gave the write
  };

  Completion answerInto(uint64_t write) {
    return [this, write](const Resolution& r) {
      clock_.advance(kPerAnswer);
      base::MutexLock lock(mu_);
      answers_.push_back({r, write});
    };
  }
  size_t answered() {
    base::MutexLock lock(mu_);
    return answers_.size();
  }

  clock::ManualClock clock_;
  executor::ExecutorPool pool_{2};
  config::Configuration config_{config::Scope::kBucket};
  std::unique_ptr<vbucket::VBucketMap> map_;
  std::unique_ptr<BucketDurability> bucket_;
  base::Mutex mu_;
  std::vector<Answer> answers_ ABSL_GUARDED_BY(mu_);
};

INSTANTIATE_TEST_SUITE_P(BothModes, DurabilityStormTest,
                         ::testing::Values(TimeoutMode::kEventDriven, TimeoutMode::kPolling),
                         [](const auto& info) {
                           return info.param == TimeoutMode::kPolling ? "Polling" : "EventDriven";
                         });

TEST_P(DurabilityStormTest, EveryWriteIsAbortedOnceInSeqnoOrderInBoundedSlices) {
  // All stamped at the same manual instant with the same timeout: one deadline.
  std::vector<uint64_t> prepare_seqno(kWrites);
  for (uint64_t i = 0; i < kWrites; ++i) {
    const Vbid vb = static_cast<Vbid>(i % kStormVBuckets);
    const std::string key = "key" + std::to_string(i);
    WriteRequest request{WriteOp::kSet, key, "v", 1,
                         Requirements{Level::kMajority, *Timeout::fromMillis(1000)}};
    const WriteResult r = bucket_->write(vb, request, answerInto(i));
    ASSERT_EQ(r.status, WriteStatus::kPending) << i;
    prepare_seqno[i] = r.seqno;
  }
  ASSERT_EQ(bucket_->stats().in_flight, kWrites);
  const uint64_t runs_before = bucket_->stats().timeout_task_runs;

  clock_.advance(1000ms + 1ns);
  bucket_->checkTimeoutsNow();
  ASSERT_TRUE(testing::eventually([&] { return answered() >= kWrites; }))
      << answered() << " of " << kWrites << " answered";

  const DurabilityStats stats = bucket_->stats();
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_EQ(stats.aborted_timeout, kWrites);
  std::vector<int> times_answered(kWrites, 0);
  std::vector<Seqno> last_in_vbucket(kStormVBuckets, 0);
  base::MutexLock lock(mu_);
  ASSERT_EQ(answers_.size(), kWrites) << "answered more than once";
  for (const Answer& a : answers_) {
    ++times_answered[a.write];
    const Resolution& r = a.resolution;
    EXPECT_FALSE(r.committed);
    EXPECT_EQ(r.reason, AmbiguousReason::kTimeout);
    EXPECT_EQ(r.vbid, a.write % kStormVBuckets);
    EXPECT_EQ(r.prepare_seqno, prepare_seqno[a.write]);
    EXPECT_GT(r.resolution_seqno, r.prepare_seqno) << "an abort was queued for it";
    // Completions of one vbucket come from one monitor call at a time, on
    // one thread, in seqno order.
    EXPECT_GT(r.prepare_seqno, last_in_vbucket[r.vbid]) << "vbucket " << r.vbid << " out of order";
    last_in_vbucket[r.vbid] = r.prepare_seqno;
  }
  for (uint64_t i = 0; i < kWrites; ++i) ASSERT_EQ(times_answered[i], 1) << "write " << i;

  // The clock stood 1 ns past the deadline when the tasks looked, and each
  // answer moved it 1 µs: the last batch was answered 100 ms late, and half
  // the writes more than 50 ms late (the p50 is a log2 bucket's upper edge).
  EXPECT_EQ(stats.timeout_late_max_us, kWrites * kPerAnswer / 1us);
  EXPECT_EQ(stats.timeout_late_p99_us, stats.timeout_late_max_us) << "capped at the maximum";
  EXPECT_EQ(stats.timeout_late_p50_us, 65'536u);

  if (GetParam() == TimeoutMode::kEventDriven) {
    // A slice stops once kSliceMs has passed on the clock after a vbucket:
    // at most kSliceMs / kPerAnswer answers plus one vbucket's writes.
    const uint64_t per_vbucket = (kWrites + kStormVBuckets - 1) / kStormVBuckets;
    const uint64_t max_per_slice = std::chrono::milliseconds(kSliceMs) / kPerAnswer + per_vbucket;
    // A run hands its answers over before it counts itself (runs is raised
    // last: bucket_timeout_task.cc), so the snapshot taken once every answer
    // was in may miss the last run. Read the counters once it is counted.
    DurabilityStats settled = stats;
    const auto runsCoverSlices = [&] {
      settled = bucket_->stats();
      return settled.timeout_task_runs - runs_before >= settled.timeout_slices_yielded + 1;
    };
    (void)testing::eventually(runsCoverSlices);
    const uint64_t runs = settled.timeout_task_runs - runs_before;
    EXPECT_GE(settled.timeout_slices_yielded, kWrites / max_per_slice)
        << "the storm was resolved in too few runs for bounded slices";
    EXPECT_GE(runs, settled.timeout_slices_yielded + 1);
  }
}

// One vbucket, 5,000 writes expiring at once, and answers that take no time
// on the clock, so the slice never ends on time: the event-driven timer still
// takes them in visits of at most kMaxWritesPerVisit, one run each, in
// seqno order, each answered once.
TEST(DurabilityStormOneVBucket, AVisitResolvesAtMostKMaxWritesPerVisit) {
  constexpr uint64_t kOneVbWrites = 5'000;
  clock::ManualClock clock;
  executor::ExecutorPool pool(2);
  config::Configuration config(config::Scope::kBucket);
  ASSERT_TRUE(
      config
          .loadJson({{"max_vbuckets", 1},
                     {"durability_timeout_mode", std::string(toString(TimeoutMode::kEventDriven))}})
          .ok());
  vbucket::VBucketMap map(config, VBucketState::kActive);
  BucketDurability bucket("one-vbucket", config, map, pool, testing::chainOf({"replica1"}),
                          clock::ClockRef::of(clock));
  base::Mutex mu;
  std::vector<Seqno> answered;  // prepare seqnos, in the order answered
  for (uint64_t i = 0; i < kOneVbWrites; ++i) {
    const std::string key = "key" + std::to_string(i);
    WriteRequest request{WriteOp::kSet, key, "v", 1,
                         Requirements{Level::kMajority, *Timeout::fromMillis(1000)}};
    const WriteResult r = bucket.write(0, request, [&mu, &answered](const Resolution& res) {
      base::MutexLock lock(mu);
      answered.push_back(res.prepare_seqno);
    });
    ASSERT_EQ(r.status, WriteStatus::kPending) << i;
  }
  const uint64_t runs_before = bucket.stats().timeout_task_runs;
  clock.advance(1000ms + 1ns);
  bucket.checkTimeoutsNow();
  const auto allAnswered = [&] {
    base::MutexLock lock(mu);
    return answered.size() >= kOneVbWrites;
  };
  ASSERT_TRUE(testing::eventually(allAnswered));
  // Runs are counted after their answers (bucket_timeout_task.cc).
  const uint64_t min_runs = (kOneVbWrites + BucketTimeoutTask::kMaxWritesPerVisit - 1) /
                            BucketTimeoutTask::kMaxWritesPerVisit;
  const auto runsCounted = [&] {
    return bucket.stats().timeout_task_runs - runs_before >= min_runs;
  };
  EXPECT_TRUE(testing::eventually(runsCounted)) << bucket.stats().timeout_task_runs - runs_before
                                                << " runs for " << kOneVbWrites << " writes";
  EXPECT_EQ(bucket.stats().aborted_timeout, kOneVbWrites);
  base::MutexLock lock(mu);
  ASSERT_EQ(answered.size(), kOneVbWrites) << "answered more than once";
  EXPECT_TRUE(std::is_sorted(answered.begin(), answered.end()));
  EXPECT_EQ(std::adjacent_find(answered.begin(), answered.end()), answered.end());
}

}  // namespace
}  // namespace syncwrite::durability
