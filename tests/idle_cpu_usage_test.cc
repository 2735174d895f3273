// CPU % arithmetic of the idle-CPU harness.
#include "bench/idle_cpu/cpu_usage.h"

#include <optional>

#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

ThreadStat T(int tid, const char* name, uint64_t ticks,
             std::optional<uint64_t> runtime_ns = std::nullopt) {
  return ThreadStat{tid, name, ticks, runtime_ns};
}

TEST(CpuPercent, IsTicksOverTicksPerSecondOverWindow) {
  EXPECT_DOUBLE_EQ(CpuPercent(100, 100, 10.0), 10.0);    // 1 s of CPU in 10 s
  EXPECT_DOUBLE_EQ(CpuPercent(1, 100, 10.0), 0.1);       // one tick: the resolution
  EXPECT_DOUBLE_EQ(CpuPercent(2000, 100, 10.0), 200.0);  // two cores busy
  EXPECT_DOUBLE_EQ(CpuPercent(0, 100, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(CpuPercent(250, 250, 0.5), 200.0);
}

TEST(CpuPercent, ANonPositiveWindowOrTickRateGivesZero) {
  EXPECT_DOUBLE_EQ(CpuPercent(100, 100, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(CpuPercent(100, 100, -1.0), 0.0);
  EXPECT_DOUBLE_EQ(CpuPercent(100, 0, 1.0), 0.0);
}

TEST(ComputeUsage, ProcessAndThreadsOverTheWindowBusiestFirst) {
  CpuSample before{1000,
                   {T(10, "main", 500, 5'000'000'000), T(11, "NonIoPool0", 300, 1'000),
                    T(12, "NonIoTimer", 200, 0)}};
  CpuSample after{1150,
                  {T(10, "main", 500, 5'000'000'000), T(11, "NonIoPool0", 400, 1'000'001'000),
                   T(12, "NonIoTimer", 250, 500'000'000)}};
  CpuUsage u = ComputeUsage(before, after, 100, 10.0);
  EXPECT_EQ(u.process_ticks, 150u);
  EXPECT_DOUBLE_EQ(u.process_percent, 15.0);
  ASSERT_EQ(u.threads.size(), 3u);
  EXPECT_EQ(u.threads[0].name, "NonIoPool0");
  EXPECT_EQ(u.threads[0].ticks, 100u);
  EXPECT_DOUBLE_EQ(u.threads[0].percent, 10.0);
  EXPECT_EQ(u.threads[1].name, "NonIoTimer");
  EXPECT_DOUBLE_EQ(u.threads[1].percent, 5.0);
  EXPECT_EQ(u.threads[2].name, "main");
  EXPECT_EQ(u.threads[2].ticks, 0u);
  // schedstat: 1 s + 0.5 s of runtime in 10 s.
  ASSERT_TRUE(u.runtime_ns.has_value());
  EXPECT_EQ(*u.runtime_ns, 1'500'000'000u);
  EXPECT_DOUBLE_EQ(*u.runtime_percent, 15.0);
  EXPECT_EQ(u.threads[0].runtime_ns, 1'000'000'000u);
}

TEST(ComputeUsage, RuntimeResolvesWhatTicksCannot) {
  CpuSample before{0, {T(1, "NonIoTimer", 0, 1'000)}};
  CpuSample after{0, {T(1, "NonIoTimer", 0, 3'001'000)}};  // 3 ms: under one tick
  CpuUsage u = ComputeUsage(before, after, 100, 10.0);
  EXPECT_DOUBLE_EQ(u.process_percent, 0.0);
  EXPECT_DOUBLE_EQ(*u.runtime_percent, 0.03);
}

TEST(ComputeUsage, NoProcessRuntimeWhenAThreadLacksSchedstat) {
  CpuSample before{0, {T(1, "a", 0, 10), T(2, "b", 0)}};
  CpuSample after{0, {T(1, "a", 0, 20), T(2, "b", 0)}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  EXPECT_FALSE(u.runtime_ns.has_value());
  EXPECT_FALSE(u.runtime_percent.has_value());
  EXPECT_EQ(u.threads[0].runtime_ns, 10u);
  EXPECT_FALSE(u.threads[1].runtime_ns.has_value());
}

TEST(RuntimePercent, IsNanosecondsOverTheWindow) {
  EXPECT_DOUBLE_EQ(RuntimePercent(1'000'000'000, 10.0), 10.0);
  EXPECT_DOUBLE_EQ(RuntimePercent(5, 0.0), 0.0);
}

TEST(ComputeUsage, AThreadBornInTheWindowCountsAllItsTicksAndAnExitedOneIsDropped) {
  CpuSample before{100, {T(10, "main", 50, 7), T(11, "gone", 50, 7)}};
  CpuSample after{130, {T(10, "main", 50, 9), T(13, "new", 20, 40)}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  EXPECT_EQ(u.process_ticks, 30u);
  ASSERT_EQ(u.threads.size(), 2u);
  EXPECT_EQ(u.threads[0].name, "new");
  EXPECT_EQ(u.threads[0].ticks, 20u);
  EXPECT_EQ(u.threads[1].name, "main");
  EXPECT_EQ(*u.runtime_ns, 42u);  // 40 for the newborn + 2
}

TEST(ComputeUsage, ACounterGoingBackwardsCountsAsZeroNotAWrap) {
  CpuSample before{100, {T(10, "main", 50, 100)}};
  CpuSample after{90, {T(10, "main", 40, 90)}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  EXPECT_EQ(u.process_ticks, 0u);
  EXPECT_EQ(u.threads[0].ticks, 0u);
  EXPECT_EQ(*u.runtime_ns, 0u);
}

TEST(ComputeUsage, TiesAreOrderedByNameThenTid) {
  CpuSample before{0, {}};
  CpuSample after{0, {T(3, "b", 5), T(2, "a", 5), T(1, "a", 5)}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  ASSERT_EQ(u.threads.size(), 3u);
  EXPECT_EQ(u.threads[0].tid, 1);
  EXPECT_EQ(u.threads[1].tid, 2);
  EXPECT_EQ(u.threads[2].tid, 3);
}

}  // namespace
}  // namespace syncwrite::bench
