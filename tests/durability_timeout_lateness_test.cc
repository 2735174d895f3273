// TimeoutLateness: log2 buckets of microseconds, percentiles as the upper
// edge of their bucket capped at the exact maximum.
#include "durability/timeout_lateness.h"

#include <chrono>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace syncwrite::durability
