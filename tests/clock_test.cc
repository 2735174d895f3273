#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "clock/clock_ref.h"
#include "clock/coarse_clock.h"
#include "clock/manual_clock.h"
#include "clock/precise_clock.h"
#include "clock/syscall_clock.h"

namespace syncwrite::clock {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// Reads the clock many times; each reading must be >= the one before.
template <typename ReadFn>
void expectMonotonic(ReadFn read) {
  TimePoint previous = read();
  for (int i = 0; i < 100000; ++i) {
    TimePoint t = read();
    ASSERT_GE(t, previous) << "reading " << i << " went backwards";
    previous = t;
  }
}

TEST(PreciseClock, IsMonotonic) {
  expectMonotonic([] { return PreciseClock::now(); });
}
TEST(CoarseClock, IsMonotonic) {
  expectMonotonic([] { return CoarseClock::now(); });
}
TEST(SyscallClock, IsMonotonic) {
  expectMonotonic([] { return SyscallClock::now(); });
}

TEST(CoarseClock, ResolutionIsPositiveAndCoarse) {
  const Duration res = CoarseClock::resolution();
  EXPECT_GT(res, Duration::zero());
  // Linux ticks at 100–1000 Hz: the coarse clock's resolution is 1–10 ms.
  EXPECT_GE(res, milliseconds(1));
  EXPECT_LE(res, milliseconds(10));
}

TEST(CoarseClock, AdvancesInStepsOfItsResolution) {
  // Watch the clock change a few times: every change is at least one tick.
  const Duration res = CoarseClock::resolution();
  TimePoint last = CoarseClock::now();
  int changes = 0;
  while (changes < 3) {
    TimePoint t = CoarseClock::now();
    if (t != last) {
      // A tick is nominally `res`; NTP may trim it slightly.
      EXPECT_GE(t - last, res - res / 10) << "a coarse reading moved by less than one tick";
      last = t;
      ++changes;
    }
  }
}

TEST(CoarseClock, StaysWithinOneTickOfThePreciseClock) {
  // Same epoch (CLOCK_MONOTONIC): the coarse reading is the last tick, so it
  // never runs ahead of the precise clock and lags it by at most about a tick.
  const Duration res = CoarseClock::resolution();
  for (int i = 0; i < 1000; ++i) {
    const TimePoint before = PreciseClock::now();
    const TimePoint coarse = CoarseClock::now();
    const TimePoint after = PreciseClock::now();
    ASSERT_LE(coarse, after);
    // Allow two ticks of lag: the tick may be late if the machine is busy.
    ASSERT_GE(coarse, before - 2 * res - milliseconds(1));
  }
}

TEST(SyscallClock, SharesThePreciseClocksEpoch) {
  const TimePoint before = PreciseClock::now();
  const TimePoint sys = SyscallClock::now();
  const TimePoint after = PreciseClock::now();
  EXPECT_GE(sys, before);
  EXPECT_LE(sys, after);
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock clock;
  const TimePoint start = clock.now();
  std::this_thread::sleep_for(milliseconds(2));
  EXPECT_EQ(clock.now(), start);
  clock.advance(milliseconds(5));
  EXPECT_EQ(clock.now(), start + milliseconds(5));
  clock.set(start + milliseconds(100));
  EXPECT_EQ(clock.now(), start + milliseconds(100));
}

TEST(ManualClock, StartsWhereToldAndDefaultsAfterTheEpoch) {
  EXPECT_GT(ManualClock().now(), TimePoint{});
  const TimePoint start(std::chrono::seconds(42));
  EXPECT_EQ(ManualClock(start).now(), start);
}

TEST(ManualClock, RefusesToGoBackwards) {
  ManualClock clock;
  const TimePoint start = clock.now();
  EXPECT_THROW(clock.advance(nanoseconds(-1)), std::invalid_argument);
  EXPECT_THROW(clock.set(start - nanoseconds(1)), std::invalid_argument);
  EXPECT_EQ(clock.now(), start);
  clock.set(start);  // Setting to the same time is allowed.
  EXPECT_EQ(clock.now(), start);
}

TEST(ManualClock, ReadersOnOtherThreadsSeeMonotonicTime) {
  ManualClock clock;
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  std::atomic<int> backwards{0};
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      TimePoint previous = clock.now();
      while (!done.load()) {
        TimePoint t = clock.now();
        if (t < previous) backwards.fetch_add(1);
        previous = t;
      }
    });
  }
  for (int i = 0; i < 10000; ++i) clock.advance(nanoseconds(1));
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(backwards.load(), 0);
  EXPECT_EQ(clock.now(), ManualClock().now() + nanoseconds(10000));
}

TEST(ClockRef, DefaultIsThePreciseClock) {
  ClockRef ref;
  const TimePoint before = PreciseClock::now();
  const TimePoint t = ref.now();
  EXPECT_GE(t, before);
  EXPECT_LE(t, PreciseClock::now());
}

TEST(ClockRef, FollowsAManualClock) {
  ManualClock manual;
  ClockRef ref = ClockRef::of(manual);
  ClockRef copy = ref;
  EXPECT_EQ(ref.now(), manual.now());
  manual.advance(milliseconds(7));
  EXPECT_EQ(copy.now(), manual.now());
}

TEST(ClockRef, WrapsEachStaticClock) {
  for (ClockRef ref :
       {ClockRef::of<PreciseClock>(), ClockRef::of<CoarseClock>(), ClockRef::of<SyscallClock>()}) {
    const TimePoint t = ref.now();
    EXPECT_GT(t, TimePoint{});
    EXPECT_LE(t, PreciseClock::now());
  }
}

TEST(ClockRef, SaysWhetherItsReadingsAreSteadyClockTimes) {
  for (ClockRef ref :
       {ClockRef::of<PreciseClock>(), ClockRef::of<CoarseClock>(), ClockRef::of<SyscallClock>()}) {
    EXPECT_TRUE(ref.onSteadyTimeline());
    // On the same timeline: never ahead of steady_clock, and at most a coarse
    // tick (plus scheduling) behind it.
    const TimePoint t = ref.now();
    const TimePoint steady = std::chrono::steady_clock::now();
    EXPECT_LE(t, steady);
    EXPECT_LT(steady - t, std::chrono::seconds(1));
  }
  ManualClock manual;
  EXPECT_FALSE(ClockRef::of(manual).onSteadyTimeline());
  EXPECT_TRUE(ClockRef().onSteadyTimeline()) << "the default is the precise clock";
}

// Compile-time: the handle is two words and trivially copyable (no allocation).
static_assert(sizeof(ClockRef) == 2 * sizeof(void*));
static_assert(std::is_trivially_copyable_v<ClockRef>);

}  // namespace
}  // namespace syncwrite::clock
