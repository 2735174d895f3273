// Tests for executor/: how idle workers are woken (ready_queue.h: a push wakes
// a sleeping worker, on a bare futex). These tests catch a pool that leaves
// tasks queued while workers sleep.
#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

// Makes `n` runs wait for each other: each arrives, then waits until all `n`
// have arrived (bounded by kGuard, so that a failure does not hang the pool).
class Rendezvous {
 public:
  explicit Rendezvous(int n) : n_(n) {}
  // False if the others did not all arrive within kGuard.
  bool arriveAndWait() {
    std::unique_lock lock(mu_);
    if (++arrived_ == n_) cv_.notify_all();
    return cv_.wait_for(lock, kGuard, [&] { return arrived_ >= n_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int n_;
  int arrived_ = 0;
};

// Every round schedules one task per worker at once, each of which can only
// finish once all of them are running: so every worker must be got out of its
// spin or its sleep. The pauses between rounds vary so that the burst finds
// the workers in every mix of spinning and sleeping. A lost wake-up stalls the
// round with tasks queued behind sleeping workers. (A rule that skipped the
// wake-up while some worker spun, with a hand-on wake by that worker, failed
// here: in round 11 without the hand-on, and under ASan in round 72 with it.)
TEST(ExecutorPoolWakeup, ABurstReachesEveryWorkerWhateverTheyWereDoing) {
  constexpr int kWorkers = 3;
  constexpr int kRounds = 200;
  const std::chrono::microseconds pauses[] = {
      std::chrono::microseconds(0), std::chrono::microseconds(5), std::chrono::microseconds(30),
      std::chrono::microseconds(200), std::chrono::microseconds(2000)};
  NullTaskable owner;
  ExecutorPool pool(kWorkers);
  for (int round = 0; round < kRounds; ++round) {
    auto meet = std::make_shared<Rendezvous>(kWorkers);
    auto met = std::make_shared<std::atomic<int>>(0);
    RunCounter done;
    for (int i = 0; i < kWorkers; ++i) {
      ASSERT_NE(kNoTask, pool.schedule(std::make_shared<LambdaTask>(owner, [=, &done](Task&) {
        if (meet->arriveAndWait()) met->fetch_add(1);
        done.add();
        return false;
      })));
    }
    ASSERT_TRUE(done.waitFor(kWorkers)) << "round " << round;
    ASSERT_EQ(kWorkers, met->load()) << "round " << round << ": the burst stalled";
    std::this_thread::sleep_for(pauses[round % std::size(pauses)]);
  }
}

// Tasks scheduled one by one to an idle pool, far enough apart that its
// workers have gone to sleep, all run: the push wakes a sleeper when nobody
// spins.
TEST(ExecutorPoolWakeup, ATaskScheduledToASleepingPoolRuns) {
  NullTaskable owner;
  ExecutorPool pool(2);
  RunCounter runs;
  for (int i = 1; i <= 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the longest spin
    ASSERT_NE(kNoTask, pool.schedule(std::make_shared<LambdaTask>(owner, [&runs](Task&) {
      runs.add();
      return false;
    })));
    ASSERT_TRUE(runs.waitFor(i)) << "task " << i;
  }
}

}  // namespace
}  // namespace syncwrite::executor
