// The timer thread's slack and its settling without wake-ups (timer_thread.h):
// where an entry is placed, that a timed task never runs before its wake time
// yet waits for its slot, and that a request due after the thread's planned
// wake-up leaves the thread asleep (a count of its voluntary context
// switches, not a time). The tick's saving for periodic tasks depends on a
// worker re-arming before the tick, so it is measured (docs/benchmarks.md,
// issue 17's event-driven CPU), not asserted: a test of it failed under two
// busy loops on this 2-vCPU machine.
#include <filesystem>
#include <fstream>
#include <string>

#include "executor/timer_thread.h"
#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

constexpr TimeRep kMs = 1'000'000;

TEST(TimerSlack, LongSleepsAreRoundedUpToTheSlotShortOnesAreExact) {
  ASSERT_EQ(TimerThread::kSlack.count(), kMs) << "the cases below assume a 1 ms slot";
  const TimeRep now = 1'000 * kMs + 123;
  // A sleep of half a slot or more: up to the next multiple of the slot.
  EXPECT_EQ(TimerThread::slotOf(now + kMs, now), 1'002 * kMs);
  EXPECT_EQ(TimerThread::slotOf(now + kMs / 2, now), 1'001 * kMs);
  EXPECT_EQ(TimerThread::slotOf(1'005 * kMs, now), 1'005 * kMs) << "on the grid already";
  // Shorter: exactly where asked.
  EXPECT_EQ(TimerThread::slotOf(now + kMs / 2 - 1, now), now + kMs / 2 - 1);
  EXPECT_EQ(TimerThread::slotOf(now, now), now);
  // Never stays never, and no time near it overflows.
  EXPECT_EQ(TimerThread::slotOf(kNeverRep, now), kNeverRep);
  EXPECT_EQ(TimerThread::slotOf(kNeverRep - 1, now), kNeverRep - 1);
}

// A task snoozed 8–10 ms ahead (below the early-arm minimum, so its entry is
// placed once, at its slot) runs at or after its slot, so never before its
// wake time.
TEST(TimerSlack, ATimedTaskRunsNoEarlierThanItsSlot) {
  NullTaskable owner;
  ExecutorPool pool(2);
  constexpr int kRounds = 20;
  for (int i = 0; i < kRounds; ++i) {
    std::promise<TimeRep> ran_at;
    std::future<TimeRep> ran = ran_at.get_future();
    const TimeRep wake = nowRep() + 8 * kMs + (i * kMs / 11);
    auto task = std::make_shared<LambdaTask>(
        owner,
        [&ran_at](Task&) {
          ran_at.set_value(nowRep());
          return false;
        },
        clock::TimePoint(clock::Duration(wake)));
    ASSERT_NE(pool.schedule(task), kNoTask);
    ASSERT_EQ(ran.wait_for(kGuard), std::future_status::ready);
    const TimeRep at = ran.get();
    EXPECT_GE(at, wake) << "round " << i;
    EXPECT_GE(at, (wake + kMs - 1) / kMs * kMs) << "round " << i << ": before its slot";
  }
}

// The voluntary context switches of the pool's timer thread so far.
long timerThreadSwitches() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "NonIoTimer") continue;
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
    }
  }
  return -1;
}

// A settle request due no earlier than the timer thread's planned wake-up is
// queued for that wake-up, not posted: scheduling a task for 80 ms from now
// while the thread sleeps until a sentinel's 40 ms leaves the thread asleep,
// and the task still runs, at or after its time. Posting the request (the
// behaviour before the queue) wakes the thread once. Little here depends on
// how fast a thread is scheduled: nothing else wakes the thread between the
// sentinel's early arm (+10 ms) and its expiry (+40 ms), and the window
// looked at is +15 to +20 ms.
TEST(TimerSlack, ARequestDueAfterThePlannedWakeUpDoesNotWakeTheTimerThread) {
  NullTaskable owner;
  ExecutorPool pool(1);
  RunCounter sentinel_runs;
  const TaskId sentinel = pool.schedule(sleeper(owner, sentinel_runs));
  ASSERT_NE(sentinel, kNoTask);
  // Returns once the timer thread has placed it. A sleep this long is armed
  // early first (kEarlyArmDivisor: at +10 ms), then at its slot: past the
  // early point the thread sleeps until +40 ms.
  ASSERT_TRUE(pool.snoozeAndWait(sentinel, milliseconds(40)));
  std::this_thread::sleep_for(milliseconds(15));
  const long before = timerThreadSwitches();
  ASSERT_GE(before, 0) << "no thread named NonIoTimer";

  std::promise<TimeRep> ran_at;
  std::future<TimeRep> ran = ran_at.get_future();
  const TimeRep wake = nowRep() + 80 * kMs;
  ASSERT_NE(pool.schedule(std::make_shared<LambdaTask>(
                owner,
                [&ran_at](Task&) {
                  ran_at.set_value(nowRep());
                  return false;
                },
                clock::TimePoint(clock::Duration(wake)))),
            kNoTask);
  std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(timerThreadSwitches(), before) << "the request woke the timer thread";

  ASSERT_EQ(ran.wait_for(kGuard), std::future_status::ready);
  EXPECT_GE(ran.get(), wake);
  EXPECT_TRUE(sentinel_runs.waitFor(1));
}

}  // namespace
}  // namespace syncwrite::executor
