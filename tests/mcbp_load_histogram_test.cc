// bench/mcbp_load's latency histogram: nearest-rank percentiles, exact below
// 512, within one bucket (at most 1/256 above the value) beyond.
#include <algorithm>
#include <cstdint>

#include <gtest/gtest.h>

#include "bench/mcbp_load/histogram.h"

namespace syncwrite::bench::mcbp_load {
namespace {

TEST(McbpLoadHistogram, EmptyAnswersZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_EQ(h.max(), 0u);
}

TEST(McbpLoadHistogram, NearestRankIsExactForSmallValues) {
  LatencyHistogram h;
  for (uint64_t v = 100; v >= 1; --v) h.record(v);  // 1..100, out of order
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.percentile(0), 1u);
  EXPECT_EQ(h.percentile(1), 1u);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.percentile(50.5), 51u);
  EXPECT_EQ(h.percentile(99), 99u);
  EXPECT_EQ(h.percentile(99.9), 100u);
  EXPECT_EQ(h.percentile(100), 100u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
}

TEST(McbpLoadHistogram, NinetyNinePointNineOfAThousandIsRank999) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 1000; ++v) h.record(v % 500);  // 0..499 twice
  EXPECT_EQ(h.percentile(99.9), 499u);                     // rank 999 of 1000
  EXPECT_EQ(h.percentile(50), 249u);                       // rank 500
  EXPECT_EQ(h.percentile(0.1), 0u);                        // rank 1
}

TEST(McbpLoadHistogram, BucketsAreContiguousAndNarrow) {
  for (size_t b = 0; b < 8000; ++b) {
    ASSERT_EQ(LatencyHistogram::bucketOf(LatencyHistogram::lowestIn(b)), b);
    ASSERT_EQ(LatencyHistogram::bucketOf(LatencyHistogram::highestIn(b)), b);
    ASSERT_EQ(LatencyHistogram::highestIn(b) + 1, LatencyHistogram::lowestIn(b + 1));
    const uint64_t width = LatencyHistogram::highestIn(b) - LatencyHistogram::lowestIn(b) + 1;
    ASSERT_LE(width * 256, std::max<uint64_t>(LatencyHistogram::lowestIn(b), 256)) << b;
  }
  EXPECT_EQ(LatencyHistogram::bucketOf(UINT64_MAX), 256u * 55 + 511);
}

TEST(McbpLoadHistogram, LargeValuesAreReportedWithinABucketAndNeverAboveTheMax) {
  LatencyHistogram h;
  h.record(1'000'000);
  const uint64_t p50 = h.percentile(50);
  EXPECT_EQ(p50, 1'000'000u);  // the bucket's top is clamped to the max recorded
  h.record(3'000'000);
  const uint64_t low = h.percentile(50);
  EXPECT_GE(low, 1'000'000u);
  EXPECT_LE(low, 1'000'000u + 1'000'000u / 256);
  EXPECT_EQ(h.percentile(100), 3'000'000u);
}

TEST(McbpLoadHistogram, AddMergesCountsMinAndMax) {
  LatencyHistogram a, b;
  for (uint64_t v = 1; v <= 50; ++v) a.record(v);
  for (uint64_t v = 51; v <= 100; ++v) b.record(v);
  a.add(b);
  EXPECT_EQ(a.count(), 100u);
  EXPECT_EQ(a.percentile(50), 50u);
  EXPECT_EQ(a.min(), 1u);
  EXPECT_EQ(a.max(), 100u);
}

}  // namespace
}  // namespace syncwrite::bench::mcbp_load
