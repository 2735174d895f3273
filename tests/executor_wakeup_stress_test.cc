// Stress tests for executor/: lost wake-ups (ready_queue.h, the sleep/wake
// handshake of notifySleeper() and pop()). A caller and the pool hand the work
// back and forth many thousands of times. Before each hand-off the caller
// pauses for a random time (Pauses), so that pushes land before, during and
// after a worker's spin and, now and then, just as it decides to sleep: the
// race a lost wake-up needs. A lost wake-up leaves the task queued behind
// sleeping workers; the wait for the run is bounded by kGuard, so the test
// fails with the round instead of hanging. No other timing is asserted.
//
// Run under ThreadSanitizer in CI, which also checks that every hand-off is
// ordered by operations it models (no fences).
#include <cmath>

#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

constexpr int kRounds = 10000;

// The pause before a hand-off, random and log-uniform from 0.5 us to 2 ms:
// from well inside a worker's spin (ReadyQueue::kMinSpin to kMaxSpin), where
// the push meets a spinning worker, to well past it, where the worker has gone
// to sleep; and so, now and then, just as it decides to sleep. Past the spin
// also because on a loaded machine a spinning worker that yields its core may
// get it back only a time slice later (tens of microseconds to milliseconds),
// and find the push there without having slept. Short pauses busy-wait (a
// sleep would not go below the timer slack); long ones sleep.
class Pauses {
 public:
  explicit Pauses(unsigned seed) : rng_(seed) {}
  void pause() {
    const auto length = std::chrono::nanoseconds(std::llround(std::exp(log_ns_(rng_))));
    if (length > std::chrono::microseconds(200)) {
      std::this_thread::sleep_for(length);
      return;
    }
    const auto until = std::chrono::steady_clock::now() + length;
    while (std::chrono::steady_clock::now() < until) {
    }
  }

 private:
  std::mt19937 rng_;
  std::uniform_real_distribution<double> log_ns_{std::log(500.0), std::log(2e6)};
};

// Counts hand-offs back to the caller, who busy-waits for them. Blocking on a
// condition variable would add its own wake-up (tens of microseconds on a
// virtual machine) to every round, so the pause before the next push would
// no longer start when the worker went back to its spin.
class Baton {
 public:
  void pass() { count_.fetch_add(1, std::memory_order_release); }
  // False if the count did not reach `n` within kGuard: the watchdog.
  bool waitFor(int n) {
    const auto give_up = std::chrono::steady_clock::now() + kGuard;
    for (unsigned i = 1; count_.load(std::memory_order_acquire) < n; ++i) {
      if (i % 64 == 0) {
        if (std::chrono::steady_clock::now() >= give_up) return false;
        std::this_thread::yield();  // a worker may need this core
      }
    }
    return true;
  }

 private:
  std::atomic<int> count_{0};
};

// The message of a round that did not complete within kGuard.
std::string lost(size_t workers, int round) {
  return "pool of " + std::to_string(workers) + ", round " + std::to_string(round) +
         ": the task did not run within " + std::to_string(kGuard.count()) +
         " s; a lost wake-up (task queued, workers asleep)";
}

// wake() of a task that sleeps forever, then wait for its run: the
// LongLivedScheduleRun path.
TEST(ExecutorPoolWakeupStress, WakePingPongNeverLosesAWakeUp) {
  for (size_t workers : {1u, 2u}) {
    NullTaskable owner;
    Baton runs;
    Pauses pauses(static_cast<unsigned>(workers));
    ExecutorPool pool(workers);  // declared after what its tasks use: destroyed first
    const TaskId id = pool.schedule(std::make_shared<LambdaTask>(
        owner,
        [&runs](Task& self) {
          self.snooze(clock::Duration::max());
          runs.pass();
          return true;
        },
        clock::kNever));
    ASSERT_NE(kNoTask, id);
    for (int round = 1; round <= kRounds; ++round) {
      pauses.pause();
      pool.wake(id);
      ASSERT_TRUE(runs.waitFor(round)) << lost(workers, round);
    }
  }
}

// schedule() of a one-shot task, then wait for its run: the
// OneShotScheduleRun path.
TEST(ExecutorPoolWakeupStress, ScheduleRunPingPongNeverLosesAWakeUp) {
  for (size_t workers : {1u, 2u}) {
    NullTaskable owner;
    Baton runs;
    Pauses pauses(static_cast<unsigned>(workers) + 100);
    ExecutorPool pool(workers);
    for (int round = 1; round <= kRounds; ++round) {
      pauses.pause();
      ASSERT_NE(kNoTask, pool.schedule(std::make_shared<LambdaTask>(owner, [&runs](Task&) {
        runs.pass();
        return false;
      })));
      ASSERT_TRUE(runs.waitFor(round)) << lost(workers, round);
    }
  }
}

// Two tasks that wake each other from inside run(), on two workers: the
// pusher is a worker too, and the other worker is spinning or asleep. The
// caller only watches that the bouncing goes on. (On failure the pool's
// destructor still stops: its stop() wakes every worker.)
TEST(ExecutorPoolWakeupStress, TasksWakingEachOtherNeverLoseAWakeUp) {
  NullTaskable owner;
  Baton runs;
  std::atomic<TaskId> ids[2] = {kNoTask, kNoTask};
  Pauses pauses[2] = {Pauses(7), Pauses(8)};  // each used by one task's runs only
  ExecutorPool pool(2);
  for (int i = 0; i < 2; ++i) {
    ids[i] = pool.schedule(std::make_shared<LambdaTask>(
        owner,
        [&, i](Task& self) {
          self.snooze(clock::Duration::max());
          runs.pass();
          pauses[i].pause();
          pool.wake(ids[1 - i].load());
          return true;
        },
        clock::kNever));
    ASSERT_NE(kNoTask, ids[i].load());
  }
  pool.wake(ids[0].load());
  for (int round = 1; round <= kRounds; ++round) {
    ASSERT_TRUE(runs.waitFor(round)) << lost(2, round);
  }
  pool.unregisterTaskable(owner);  // stops the bouncing: a wake of a cancelled task is a no-op
}

}  // namespace
}  // namespace syncwrite::executor
