// BusyYield (server/busy_yield.h): a thread yields once it has run a whole
// slice without sleeping, at most once per slice; a sleep during a slice
// starts a new one; the switch count is read at most once per slice. With
// the kernel's own sources, a thread that sleeps between yield points never
// yields and one that spins does. Nothing asserts a duration.
#include <chrono>
#include <cstdint>
#include <thread>

#include <gtest/gtest.h>

#include "server/busy_yield.h"

namespace syncwrite::server {
namespace {

using std::chrono::microseconds;
using std::chrono::steady_clock;

// Sources a test moves by hand.
struct FakeKernel {
  uint64_t switches = 0;
  steady_clock::time_point now{};
  int yields = 0;
  int counts_read = 0;

  BusyYield::Sources sources() {
    return BusyYield::Sources{
        .voluntary_switches =
            [this] {
              ++counts_read;
              return switches;
            },
        .now = [this] { return now; },
        .yield = [this] { ++yields; },
    };
  }
};

TEST(BusyYield, YieldsOnceASliceHasRunWithoutSleep) {
  FakeKernel kernel;
  BusyYield busy(microseconds(1000), kernel.sources());
  EXPECT_FALSE(busy.atYieldPoint());  // the first call starts the slice
  kernel.now += microseconds(999);
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(1);
  EXPECT_TRUE(busy.atYieldPoint());
  EXPECT_EQ(kernel.yields, 1);
}

TEST(BusyYield, ASliceRestartsAfterAYield) {
  FakeKernel kernel;
  BusyYield busy(microseconds(1000), kernel.sources());
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(5000);  // one long stretch: one yield, not five
  EXPECT_TRUE(busy.atYieldPoint());
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(999);
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(1);
  EXPECT_TRUE(busy.atYieldPoint());
  EXPECT_EQ(kernel.yields, 2);
}

TEST(BusyYield, ASleepDuringASliceStartsANewOne) {
  FakeKernel kernel;
  BusyYield busy(microseconds(1000), kernel.sources());
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(900);
  ++kernel.switches;  // blocked in epoll_wait in between
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(100);  // a slice since the first call, but it slept
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(999);
  EXPECT_FALSE(busy.atYieldPoint());
  kernel.now += microseconds(1);  // a whole slice since the new one began
  EXPECT_TRUE(busy.atYieldPoint());
  EXPECT_EQ(kernel.yields, 1);
}

TEST(BusyYield, ReadsTheSwitchCountAtMostOncePerSlice) {
  FakeKernel kernel;
  BusyYield busy(microseconds(1000), kernel.sources());
  for (int i = 0; i < 100; ++i) {
    busy.atYieldPoint();
    kernel.now += microseconds(50);  // 5 ms in all
  }
  EXPECT_LE(kernel.counts_read, 1 + 5);
  EXPECT_EQ(kernel.yields, 4);  // at 1.0, 2.0, 3.0 and 4.0 ms; 4.95 is short of 5.0
}

TEST(BusyYield, AThreadThatSleepsBetweenYieldPointsNeverYields) {
  // A slice far shorter than each sleep: only the switch count keeps it from
  // yielding, so this fails if the kernel's count is not read.
  BusyYield busy(microseconds(50));
  int yielded = 0;
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(microseconds(200));
    yielded += busy.atYieldPoint() ? 1 : 0;
  }
  EXPECT_EQ(yielded, 0);
}

TEST(BusyYield, AThreadThatSpinsYields) {
  BusyYield busy(microseconds(200));
  EXPECT_FALSE(busy.atYieldPoint());
  const auto until = steady_clock::now() + microseconds(2000);
  int yielded = 0;
  while (steady_clock::now() < until) yielded += busy.atYieldPoint() ? 1 : 0;
  EXPECT_GE(yielded, 1);
  EXPECT_LE(yielded, 10);  // at most once per slice
}

TEST(BusyYield, EachThreadHasItsOwn) {
  BusyYield* mine = &BusyYield::forThisThread();
  BusyYield* theirs = nullptr;
  std::thread([&] { theirs = &BusyYield::forThisThread(); }).join();
  EXPECT_NE(mine, theirs);
  EXPECT_EQ(mine, &BusyYield::forThisThread());
}

}  // namespace
}  // namespace syncwrite::server
