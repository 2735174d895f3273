// TimeoutLateness: log2 buckets of microseconds, percentiles as the upper
// edge of their bucket capped at the exact maximum. CommitLatency: the
// commit-latency histogram per level.
#include "durability/timeout_lateness.h"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "durability/commit_latency.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;

TEST(TimeoutLateness, EmptyReadsZero) {
  const TimeoutLateness lateness;
  EXPECT_EQ(lateness.count(), 0u);
  EXPECT_EQ(lateness.percentileMicros(0.99), 0u);
  EXPECT_EQ(lateness.maxMicros(), 0u);
}

TEST(TimeoutLateness, PercentilesAreBucketEdgesCappedAtTheMaximum) {
  TimeoutLateness lateness;
  lateness.record(3us, 98);   // bucket [2, 4) µs
  lateness.record(300us, 1);  // bucket [256, 512) µs
  lateness.record(700us, 1);  // bucket [512, 1024) µs
  EXPECT_EQ(lateness.count(), 100u);
  EXPECT_EQ(lateness.percentileMicros(0.5), 4u);
  EXPECT_EQ(lateness.percentileMicros(0.98), 4u);
  EXPECT_EQ(lateness.percentileMicros(0.99), 512u);
  EXPECT_EQ(lateness.percentileMicros(1.0), 700u) << "the edge 1024 capped at the maximum";
  EXPECT_EQ(lateness.maxMicros(), 700u);
}

TEST(TimeoutLateness, NothingAnsweredRecordsNothingAndEarlyCountsAsZero) {
  TimeoutLateness lateness;
  lateness.record(5ms, 0);
  EXPECT_EQ(lateness.count(), 0u);
  lateness.record(-1ms, 1);  // a clock that moved back: never negative
  EXPECT_EQ(lateness.percentileMicros(0.5), 0u);
  EXPECT_EQ(lateness.maxMicros(), 0u);
}

TEST(TimeoutLateness, SnapshotsCarryTheSumAndAddUp) {
  TimeoutLateness a;
  TimeoutLateness b;
  a.record(3us, 2);
  b.record(700us, 1);
  TimeoutLateness::Snapshot both = a.snapshot();
  both += b.snapshot();
  EXPECT_EQ(both.count(), 3u);
  EXPECT_EQ(both.sum_ns, 2 * 3000u + 700000u);
  EXPECT_EQ(both.maxMicros(), 700u);
  EXPECT_EQ(both.counts[2], 2u);   // [2, 4) µs
  EXPECT_EQ(both.counts[10], 1u);  // [512, 1024) µs
  EXPECT_EQ(both.percentileMicros(0.5), 4u);
  EXPECT_EQ(TimeoutLateness::upperEdgeMicros(0), 1u);
  EXPECT_EQ(TimeoutLateness::upperEdgeMicros(10), 1024u);
}

TEST(CommitLatency, EachLevelCountsIntoTheBucketAtOrAboveItsLatency) {
  CommitLatency latency;
  latency.record(Level::kMajority, 50'000);       // 50 µs: the first bucket (≤ 100 µs)
  latency.record(Level::kMajority, 100'000);      // exactly 100 µs: still the first
  latency.record(Level::kMajority, 20'000'000);   // 20 ms: (10, 25] ms
  latency.record(Level::kPersistToMajority, -5);  // a clock step back counts as 0
  latency.record(Level::kMajority, int64_t{61} * 1'000'000'000);  // over 60 s: the open bucket
  latency.record(Level::kNone, 1);                                // not a SyncWrite: ignored
  const CommitLatency::Snapshot majority = latency.snapshot(Level::kMajority);
  EXPECT_EQ(majority.count(), 4u);
  EXPECT_EQ(majority.counts[0], 2u);
  EXPECT_EQ(majority.counts[7], 1u);  // the edge 25000 µs
  EXPECT_EQ(majority.counts[CommitLatency::kBuckets - 1], 1u);
  EXPECT_EQ(majority.sum_ns, 50'000u + 100'000u + 20'000'000u + 61'000'000'000u);
  EXPECT_EQ(latency.snapshot(Level::kPersistToMajority).count(), 1u);
  EXPECT_EQ(latency.snapshot(Level::kMajorityAndPersistOnMaster).count(), 0u);
  EXPECT_EQ(latency.snapshot(Level::kNone).count(), 0u);
}

TEST(CommitLatency, ThreadsRecordingAtOnceLoseNothing) {
  CommitLatency latency;
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t) {
    threads.emplace_back([&latency] {
      for (int i = 0; i < 1000; ++i) latency.record(Level::kMajority, 1'000'000);
    });
  }
  for (std::thread& thread : threads) thread.join();
  const CommitLatency::Snapshot s = latency.snapshot(Level::kMajority);
  EXPECT_EQ(s.count(), 12000u);
  EXPECT_EQ(s.counts[3], 12000u);  // 1 ms: the edge 1000 µs
}

}  // namespace
}  // namespace syncwrite::durability
