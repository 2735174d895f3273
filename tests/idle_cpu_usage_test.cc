// CPU % arithmetic of the idle-CPU harness.
#include "bench/idle_cpu/cpu_usage.h"

#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

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
  CpuSample before{1000, {{10, "main", 500}, {11, "NonIoPool0", 300}, {12, "NonIoTimer", 200}}};
  CpuSample after{1150, {{10, "main", 500}, {11, "NonIoPool0", 400}, {12, "NonIoTimer", 250}}};
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
}

TEST(ComputeUsage, AThreadBornInTheWindowCountsAllItsTicksAndAnExitedOneIsDropped) {
  CpuSample before{100, {{10, "main", 50}, {11, "gone", 50}}};
  CpuSample after{130, {{10, "main", 50}, {13, "new", 20}}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  EXPECT_EQ(u.process_ticks, 30u);
  ASSERT_EQ(u.threads.size(), 2u);
  EXPECT_EQ(u.threads[0].name, "new");
  EXPECT_EQ(u.threads[0].ticks, 20u);
  EXPECT_EQ(u.threads[1].name, "main");
}

TEST(ComputeUsage, ACounterGoingBackwardsCountsAsZeroNotAWrap) {
  CpuSample before{100, {{10, "main", 50}}};
  CpuSample after{90, {{10, "main", 40}}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  EXPECT_EQ(u.process_ticks, 0u);
  EXPECT_EQ(u.threads[0].ticks, 0u);
}

TEST(ComputeUsage, TiesAreOrderedByNameThenTid) {
  CpuSample before{0, {}};
  CpuSample after{0, {{3, "b", 5}, {2, "a", 5}, {1, "a", 5}}};
  CpuUsage u = ComputeUsage(before, after, 100, 1.0);
  ASSERT_EQ(u.threads.size(), 3u);
  EXPECT_EQ(u.threads[0].tid, 1);
  EXPECT_EQ(u.threads[1].tid, 2);
  EXPECT_EQ(u.threads[2].tid, 3);
}

}  // namespace
}  // namespace syncwrite::bench
