// The lateness summary bench/timeout_precision reports (lateness.h).
#include "bench/timeout_precision/lateness.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

TEST(LatenessSummary, NearestRankPercentilesAndEarlyCount) {
  std::vector<int64_t> samples;
  for (int64_t i = 1000; i >= 1; --i) samples.push_back(i * 1000);  // 1..1000 us, unsorted
  samples.push_back(-5);                                            // one early answer
  const LatenessSummary s = Summarize(samples);
  EXPECT_EQ(s.count, 1001u);
  EXPECT_EQ(s.early, 1u);
  EXPECT_EQ(s.min_ns, -5);
  EXPECT_EQ(s.p50_ns, 500'000);   // rank ceil(0.5 * 1001) = 501: the 500th positive
  EXPECT_EQ(s.p99_ns, 990'000);   // rank 991
  EXPECT_EQ(s.p999_ns, 999'000);  // rank 1000
  EXPECT_EQ(s.max_ns, 1'000'000);
  EXPECT_EQ(ToJson(s)["early"], 1);
  EXPECT_DOUBLE_EQ(ToJson(s)["max_ms"].get<double>(), 1.0);
}

TEST(LatenessSummary, ZeroIsOnTimeNotEarly) {
  const LatenessSummary s = Summarize({0, 0, 1});
  EXPECT_EQ(s.early, 0u);
  EXPECT_EQ(Summarize({}).count, 0u);
}

}  // namespace
}  // namespace syncwrite::bench
