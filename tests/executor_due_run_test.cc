// Tests for DueRun::kTimerThread: a task whose timer falls due runs on the
// timer thread that found it due, every other run on a worker, and the pool's
// semantics (executor_pool.h) hold for both.
#include "tests/executor_test_support.h"

namespace syncwrite::executor {
namespace {

using namespace test;

clock::TimePoint fromNow(clock::Duration d) { return std::chrono::steady_clock::now() + d; }

// Far enough ahead that the test thread schedules (or re-arms) before it
// even under ThreadSanitizer on a loaded machine: a task scheduled after its
// wake time is queued for a worker by schedule(), and one that re-arms for a
// time already past by the end of its run goes to a worker too.
constexpr auto kAhead = milliseconds(50);

// Records the thread names of a task's runs.
class Names {
 public:
  void add(std::string name) {
    std::lock_guard lock(mu_);
    names_.push_back(std::move(name));
  }
  std::vector<std::string> get() {
    std::lock_guard lock(mu_);
    return names_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> names_;
};

// A one-shot task due at `at` that records where it ran.
std::shared_ptr<LambdaTask> namedOneShot(Taskable& owner, RunCounter& runs, Names& names,
                                         clock::TimePoint at, DueRun due_run) {
  return std::make_shared<LambdaTask>(
      owner,
      [&runs, &names](Task&) {
        names.add(threadName());
        runs.add();
        return false;
      },
      at, due_run);
}

// A DueRun::kTimerThread task that records where it ran, then sleeps until
// woken or snoozed.
std::shared_ptr<LambdaTask> namedSleeper(Taskable& owner, RunCounter& runs, Names& names,
                                         clock::TimePoint initial_wake) {
  return std::make_shared<LambdaTask>(
      owner,
      [&runs, &names](Task& self) {
        names.add(threadName());
        self.snooze(clock::Duration::max());
        runs.add();
        return true;
      },
      initial_wake, DueRun::kTimerThread);
}

TEST(DueRun, ARunDueOnItsTimerRunsOnTheTimerThread) {
  NullTaskable owner;
  RunCounter runs;
  Names names;
  ExecutorPool pool(2);
  int left = 3;
  ASSERT_NE(kNoTask, pool.schedule(std::make_shared<LambdaTask>(
                         owner,
                         [&](Task& self) {
                           names.add(threadName());
                           runs.add();
                           self.snooze(kAhead);
                           return --left > 0;
                         },
                         fromNow(kAhead), DueRun::kTimerThread)));
  ASSERT_TRUE(runs.waitFor(3));
  EXPECT_EQ((std::vector<std::string>{"NonIoTimer", "NonIoTimer", "NonIoTimer"}), names.get());
}

TEST(DueRun, TheDefaultRunsOnAWorkerWhenItsTimerFalls) {
  NullTaskable owner;
  RunCounter runs;
  Names names;
  ExecutorPool pool(1);
  pool.schedule(namedOneShot(owner, runs, names, fromNow(kAhead), DueRun::kWorker));
  ASSERT_TRUE(runs.waitFor(1));
  EXPECT_EQ((std::vector<std::string>{"NonIoPool0"}), names.get());
}

TEST(DueRun, WakesAndRunsDueAtScheduleGoToAWorker) {
  NullTaskable owner;
  RunCounter runs;
  Names names;
  ExecutorPool pool(1);
  // Due at once when scheduled: queued by schedule(), not by a timer.
  auto task = namedSleeper(owner, runs, names, clock::TimePoint{});
  const TaskId id = pool.schedule(task);
  ASSERT_TRUE(runs.waitFor(1));
  fence(pool);  // asleep forever now
  pool.wake(id);
  ASSERT_TRUE(runs.waitFor(2));
  EXPECT_EQ((std::vector<std::string>{"NonIoPool0", "NonIoPool0"}), names.get());
}

// A snooze a microsecond ahead is settled by a drain of the timer thread's
// queue, which may find it due already (or place it exactly): either way it
// runs without waiting for another wake-up. (A snooze that lands while the
// previous run is still returning is found due by the runner, which queues
// it for a worker, so not every run is on the timer thread.)
TEST(DueRun, ASnoozeSettledAlreadyDueStillRuns) {
  NullTaskable owner;
  RunCounter runs;
  Names names;
  ExecutorPool pool(1);
  const TaskId id = pool.schedule(namedSleeper(owner, runs, names, clock::kNever));
  for (int i = 1; i <= 20; ++i) {
    pool.snooze(id, std::chrono::microseconds(1));
    ASSERT_TRUE(runs.waitFor(i));
  }
  const std::vector<std::string> ran_on = names.get();
  EXPECT_NE(ran_on.end(), std::find(ran_on.begin(), ran_on.end(), "NonIoTimer"));
}

// unregisterTaskable() from another thread returns only once a run on the
// timer thread is over.
TEST(DueRun, UnregisterWaitsForARunOnTheTimerThread) {
  NullTaskable owner;
  std::latch started(1);
  std::latch release(1);
  std::atomic<bool> finished{false};
  std::string ran_on;
  ExecutorPool pool(1);
  pool.schedule(std::make_shared<LambdaTask>(
      owner,
      [&](Task&) {
        ran_on = threadName();
        started.count_down();
        release.wait();
        finished.store(true);
        return false;
      },
      fromNow(kAhead), DueRun::kTimerThread));
  started.wait();
  EXPECT_EQ("NonIoTimer", ran_on);
  auto unregistered = std::async(std::launch::async, [&] { pool.unregisterTaskable(owner); });
  // Not a timing assertion: it must not return at all while the run is held.
  EXPECT_EQ(std::future_status::timeout, unregistered.wait_for(milliseconds(50)));
  release.count_down();
  ASSERT_EQ(std::future_status::ready, unregistered.wait_for(kGuard));
  EXPECT_TRUE(finished.load());
}

// The synchronous calls that wait for the timer thread work from a run on it,
// unregisterTaskable() of the run's own owner included (which must not wait
// for the run itself).
TEST(DueRun, ARunOnTheTimerThreadMayCallThePoolsSynchronousForms) {
  NullTaskable owner;
  NullTaskable other_owner;
  RunCounter other_runs;
  ExecutorPool pool(1);
  auto other = sleeper(other_owner, other_runs);
  const TaskId other_id = pool.schedule(other);
  RunCounter sleeper_runs;
  const TaskId sleeper_id = pool.schedule(sleeper(owner, sleeper_runs));
  std::promise<std::vector<bool>> results;
  std::string ran_on;
  pool.schedule(std::make_shared<LambdaTask>(
      owner,
      [&](Task&) {
        ran_on = threadName();
        std::vector<bool> r;
        r.push_back(pool.snoozeAndWait(sleeper_id, hours(1)));
        r.push_back(pool.cancel(sleeper_id));
        pool.unregisterTaskable(other_owner);
        r.push_back(pool.wakeAndWait(other_id));  // gone with its owner
        pool.unregisterTaskable(owner);           // its own: returns
        results.set_value(r);
        return true;  // refused: the owner is shut down
      },
      fromNow(kAhead), DueRun::kTimerThread));
  auto done = results.get_future();
  ASSERT_EQ(std::future_status::ready, done.wait_for(kGuard));
  EXPECT_EQ("NonIoTimer", ran_on);
  EXPECT_EQ((std::vector<bool>{true, true, false}), done.get());
  EXPECT_EQ(TaskState::kDead, other->state());
  fence(pool);
  EXPECT_EQ(0, other_runs.count());
  EXPECT_EQ(0, sleeper_runs.count());
}

// A run on the timer thread that throws leaves its task dead; the thread
// goes on firing other timers, its own due runs included.
TEST(DueRun, AThrowingRunOnTheTimerThreadIsDeadAndTheTimersGoOn) {
  NullTaskable owner;
  ExecutorPool pool(1);
  auto throws = std::make_shared<LambdaTask>(
      owner, [](Task&) -> bool { throw std::runtime_error("boom"); }, fromNow(kAhead),
      DueRun::kTimerThread);
  const TaskId id = pool.schedule(throws);
  RunCounter runs;
  Names names;
  pool.schedule(namedOneShot(owner, runs, names, fromNow(2 * kAhead), DueRun::kTimerThread));
  ASSERT_TRUE(runs.waitFor(1));
  EXPECT_EQ((std::vector<std::string>{"NonIoTimer"}), names.get());
  EXPECT_EQ(TaskState::kDead, throws->state());
  EXPECT_FALSE(pool.wakeAndWait(id));
}

// Runs on the timer thread (its own 1 ms re-arms) and on workers (wakes from
// other threads) never overlap.
TEST(DueRun, TimerThreadAndWorkerRunsNeverOverlap) {
  NullTaskable owner;
  OverlapCounter overlap;
  RunCounter runs;
  ExecutorPool pool(2);
  const TaskId id = pool.schedule(overlapProbe(owner, overlap, runs, milliseconds(1),
                                               fromNow(milliseconds(1)), DueRun::kTimerThread));
  std::vector<std::thread> wakers;
  for (int t = 0; t < 2; ++t) {
    wakers.emplace_back([&pool, id] {
      for (int i = 0; i < 2000; ++i) {
        pool.wake(id);
        if (i % 100 == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& t : wakers) t.join();
  ASSERT_TRUE(runs.waitFor(runs.count() + 3));  // the 1 ms re-arms go on
  pool.unregisterTaskable(owner);
  EXPECT_EQ(0, overlap.overlaps.load());
}

// A wake that arrives while a run is in progress on the timer thread causes
// exactly one more run, on a worker.
TEST(DueRun, AWakeDuringATimerThreadRunCausesOneMoreRunOnAWorker) {
  NullTaskable owner;
  std::latch started(1);
  std::latch release(1);
  RunCounter runs;
  Names names;
  ExecutorPool pool(1);
  std::atomic<bool> first{true};
  const TaskId id = pool.schedule(std::make_shared<LambdaTask>(
      owner,
      [&](Task& self) {
        names.add(threadName());
        if (first.exchange(false)) {
          started.count_down();
          release.wait();
        }
        self.snooze(clock::Duration::max());
        runs.add();
        return true;
      },
      fromNow(kAhead), DueRun::kTimerThread));
  started.wait();
  pool.wake(id);
  pool.wake(id);  // coalesces with the first
  release.count_down();
  ASSERT_TRUE(runs.waitFor(2));
  fence(pool);  // the one worker has run everything queued
  EXPECT_EQ(2, runs.count());
  EXPECT_EQ((std::vector<std::string>{"NonIoTimer", "NonIoPool0"}), names.get());
}

// A due run does not start once the pool is being destroyed: the task below
// falls due while the destructor waits for the only worker (held by a
// blocker), and must not run.
TEST(DueRun, NoDueRunStartsWhileThePoolIsDestroyed) {
  NullTaskable owner;
  RunCounter runs;
  Names names;
  auto pool = std::make_unique<ExecutorPool>(1);
  auto blocker = std::make_unique<Blocker>(*pool);
  const auto due = fromNow(4 * kAhead);
  pool->schedule(namedOneShot(owner, runs, names, due, DueRun::kTimerThread));
  auto destroyed = std::async(std::launch::async, [&pool] { pool.reset(); });
  // Let the deadline pass (and the timer thread act on it) while the
  // destructor is inside; if the destructor had not begun by then, the run
  // would be legitimate, so the wait is long against an async thread's start.
  std::this_thread::sleep_until(due + 2 * kAhead);
  blocker->release();
  ASSERT_EQ(std::future_status::ready, destroyed.wait_for(kGuard));
  EXPECT_EQ(0, runs.count()) << "ran on " << (names.get().empty() ? "" : names.get()[0]);
}

}  // namespace
}  // namespace syncwrite::executor
