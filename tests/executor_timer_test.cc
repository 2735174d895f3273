// The timer thread's slack and its settling without wake-ups (timer_thread.h):
// where an entry is placed, that a timed task never runs before its wake time
// yet waits for its slot, and that a task re-arming itself each period costs
// the timer thread about one wake-up per period rather than two (a post and an
// expiry). The last is a count of the thread's voluntary context switches, not
// a time.
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

// A task snoozed 5–9 ms ahead (below the early-arm minimum, so its entry is
// placed once, at its slot) runs at or after its slot, so never before its
// wake time.
TEST(TimerSlack, ATimedTaskRunsNoEarlierThanItsSlot) {
  NullTaskable owner;
  ExecutorPool pool(2);
  constexpr int kRounds = 20;
  for (int i = 0; i < kRounds; ++i) {
    std::promise<TimeRep> ran_at;
    std::future<TimeRep> ran = ran_at.get_future();
    const TimeRep wake = nowRep() + 5 * kMs + (i * kMs / 5);
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

// A task that snoozes itself for one slot after each run, like the flusher's
// tick: its re-arm (due in the slot after next) is queued for the tick the
// timer thread planned when it queued the task, and that tick finds it due, so
// each period wakes the thread about once. Settling each re-arm by a post
// wakes it twice (the post, then the expiry): 2 per run, against the bound of
// 1.5.
TEST(TimerSlack, APeriodicTaskWakesTheTimerThreadAboutOncePerPeriod) {
  NullTaskable owner;
  ExecutorPool pool(1);
  constexpr int kRuns = 200;
  RunCounter runs;
  std::atomic<long> switches_at_first_run{-1};
  int calls = 0;
  auto task = std::make_shared<LambdaTask>(owner, [&](Task& self) {
    if (calls == 0) switches_at_first_run.store(timerThreadSwitches());
    self.snooze(milliseconds(1));
    runs.add();
    return ++calls < kRuns;
  });
  ASSERT_NE(pool.schedule(task), kNoTask);
  ASSERT_TRUE(runs.waitFor(kRuns));
  const long first = switches_at_first_run.load();
  const long last = timerThreadSwitches();
  ASSERT_GE(first, 0) << "no thread named NonIoTimer";
  const double per_run = static_cast<double>(last - first) / (kRuns - 1);
  RecordProperty("timer_thread_switches_per_run", std::to_string(per_run));
  EXPECT_LT(per_run, 1.5) << (last - first) << " switches over " << kRuns - 1 << " periods";
}

}  // namespace
}  // namespace syncwrite::executor
