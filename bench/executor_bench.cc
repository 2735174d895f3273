// executor_bench: the costs the durability layer pays the ExecutorPool.
//
//  - OneShotScheduleRun: schedule a one-shot task and wait until it has run
//    (one NonIO worker per benchmark thread, as kv_engine's benchmark does).
//  - OneShotQueueOnly: a control for OneShotScheduleRun, the hand-off alone.
//  - LongLivedScheduleRun: wake a task that sleeps forever, wait until it has
//    run.
//  - TimeoutAddCancel_Snooze / _SnoozeAndWait (Timeouts: N tasks across the
//    benchmark threads, pool of one worker): every iteration re-snoozes the
//    next task, round-robin, to a random 10-30 s: the re-arm of the per-vbucket
//    SyncWrite timeout. The tasks never run.
//
// Owners are NullTaskable: a mocked call could cost more than what is measured.
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "executor/executor_pool.h"
#include "executor/ready_queue.h"
#include "executor/task.h"

namespace {

using namespace syncwrite;
using executor::ExecutorPool;
using executor::NullTaskable;
using executor::Task;
using executor::TaskId;

// Shared by the threads of one benchmark run: thread 0 creates the pool
// before the timed loop and destroys it after; the others wait for it.
struct Shared {
  std::atomic<ExecutorPool*> pool{nullptr};
  std::unique_ptr<ExecutorPool> owned;
  NullTaskable owner;
  std::atomic<int64_t> unexpected_runs{0};

  ExecutorPool& start(benchmark::State& state, size_t workers) {
    if (state.thread_index() == 0) {
      unexpected_runs.store(0);
      owned = std::make_unique<ExecutorPool>(workers);
      pool.store(owned.get(), std::memory_order_release);
    }
    ExecutorPool* p;
    while ((p = pool.load(std::memory_order_acquire)) == nullptr) std::this_thread::yield();
    return *p;
  }
  // Called by every thread after its timed loop; the loop's end is a barrier.
  void stop(benchmark::State& state) {
    state.SetItemsProcessed(state.iterations());
    if (state.thread_index() != 0) return;
    if (unexpected_runs.load() != 0) state.SkipWithError("a timeout task ran");
    pool.store(nullptr, std::memory_order_release);
    owned.reset();
  }
};
Shared shared;

// One step of a spin-wait; every 64th step gives the core away, since on an
// oversubscribed machine the thread being waited for may need it.
void pause(int step) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
  if (step % 64 == 0) std::this_thread::yield();
}

// Waits until `flag` is non-zero: spins briefly (the run usually comes within
// a microsecond), then blocks on the atomic.
void waitUntilSet(std::atomic<uint32_t>& flag) {
  for (int i = 1; i <= 4096; ++i) {
    if (flag.load(std::memory_order_acquire) != 0) return;
    pause(i);
  }
  while (flag.load(std::memory_order_acquire) == 0) flag.wait(0, std::memory_order_acquire);
}

void signal(std::atomic<uint32_t>& flag) {
  flag.store(1, std::memory_order_release);
  flag.notify_one();
}

class OneShotTask final : public Task {
 public:
  OneShotTask(executor::Taskable& owner, std::atomic<uint32_t>& done)
      : Task(owner, "one-shot"), done_(done) {}
  bool run() override {
    signal(done_);
    return false;
  }

 private:
  std::atomic<uint32_t>& done_;
};

// The loop of the one-shot rows: make a task, hand it off with `handOff`, wait
// until it has run. Shared, so that the control row below measures exactly the
// same loop as OneShotScheduleRun.
template <typename HandOff>
void runOneShots(benchmark::State& state, HandOff&& handOff) {
  alignas(64) std::atomic<uint32_t> done{0};
  for (auto _ : state) {
    done.store(0, std::memory_order_relaxed);
    auto task = std::make_shared<OneShotTask>(shared.owner, done);
    handOff(task);
    waitUntilSet(done);
    // Also wait for the pool to drop its reference, so that the task is freed
    // by the thread that allocated it: with glibc malloc a free on another
    // thread takes the allocating arena's lock, which the next allocation
    // here wants too; contended, both sides sleep in the kernel (measured:
    // 2-3x the round trip). kv_engine's benchmark runs on jemalloc.
    for (int i = 1; task.use_count() != 1; ++i) pause(i);
  }
}

void OneShotScheduleRun(benchmark::State& state) {
  ExecutorPool& pool = shared.start(state, state.threads());
  runOneShots(state, [&pool](const std::shared_ptr<OneShotTask>& task) { pool.schedule(task); });
  shared.stop(state);
}

// Control for OneShotScheduleRun: the same loop, with the hand-off alone. The
// tasks go through the pool's ready queue to one consumer thread per benchmark
// thread, which runs what it pops and drops it; there are no ids, no task
// table, no state machine and no timers. In the same run, this row is what
// the hand-off between two threads costs on the machine, and the gap to
// OneShotScheduleRun is what the pool's own bookkeeping adds.
struct QueueOnly {
  std::atomic<executor::ReadyQueue*> queue{nullptr};
  std::unique_ptr<executor::ReadyQueue> owned;
  std::vector<std::thread> consumers;

  executor::ReadyQueue& start(benchmark::State& state) {
    if (state.thread_index() == 0) {
      owned = std::make_unique<executor::ReadyQueue>();
      for (int i = 0; i < state.threads(); ++i) {
        consumers.emplace_back([q = owned.get()] {
          executor::ReadyQueue::SpinBudget spin;
          while (std::shared_ptr<Task> task = q->pop(spin)) task->run();
        });
      }
      queue.store(owned.get(), std::memory_order_release);
    }
    executor::ReadyQueue* q;
    while ((q = queue.load(std::memory_order_acquire)) == nullptr) std::this_thread::yield();
    return *q;
  }
  void stop(benchmark::State& state) {
    state.SetItemsProcessed(state.iterations());
    if (state.thread_index() != 0) return;
    owned->stop();
    for (std::thread& t : consumers) t.join();
    consumers.clear();
    queue.store(nullptr, std::memory_order_release);
    owned.reset();
  }
};
QueueOnly queue_only;

void OneShotQueueOnly(benchmark::State& state) {
  executor::ReadyQueue& queue = queue_only.start(state);
  runOneShots(state, [&queue](const std::shared_ptr<OneShotTask>& task) { queue.push(task); });
  queue_only.stop(state);
}

class SleeperTask final : public Task {
 public:
  SleeperTask(executor::Taskable& owner, std::atomic<uint32_t>& ran)
      : Task(owner, "sleeper", executor::TaskGroup::kNonIO, clock::kNever), ran_(ran) {}
  bool run() override {
    snooze(clock::Duration::max());
    signal(ran_);
    return true;
  }

 private:
  std::atomic<uint32_t>& ran_;
};

void LongLivedScheduleRun(benchmark::State& state) {
  ExecutorPool& pool = shared.start(state, state.threads());
  alignas(64) std::atomic<uint32_t> ran{0};
  const TaskId id = pool.schedule(std::make_shared<SleeperTask>(shared.owner, ran));
  for (auto _ : state) {
    ran.store(0, std::memory_order_relaxed);
    pool.wake(id);
    waitUntilSet(ran);
  }
  pool.cancel(id);
  shared.stop(state);
}

class TimeoutTask final : public Task {
 public:
  TimeoutTask(executor::Taskable& owner, clock::TimePoint wake)
      : Task(owner, "timeout", executor::TaskGroup::kNonIO, wake) {}
  bool run() override {
    shared.unexpected_runs.fetch_add(1);
    return false;
  }
};

template <bool kWait>
void TimeoutAddCancel(benchmark::State& state) {
  ExecutorPool& pool = shared.start(state, 1);
  const int64_t per_thread = state.range(0) / state.threads();
  std::mt19937_64 random(std::random_device{}());
  std::uniform_int_distribution<int64_t> timeout_ms(10'000, 30'000);
  auto timeout = [&] { return std::chrono::milliseconds(timeout_ms(random)); };

  std::vector<TaskId> ids;
  ids.reserve(per_thread);
  const auto now = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < per_thread; ++i) {
    ids.push_back(pool.schedule(std::make_shared<TimeoutTask>(shared.owner, now + timeout())));
  }
  // Let the timer thread arm them all before timing starts.
  pool.snoozeAndWait(ids.back(), timeout());

  size_t next = 0;
  for (auto _ : state) {
    if constexpr (kWait) {
      benchmark::DoNotOptimize(pool.snoozeAndWait(ids[next], timeout()));
    } else {
      pool.snooze(ids[next], timeout());
    }
    if (++next == ids.size()) next = 0;
  }
  shared.stop(state);
}

BENCHMARK(OneShotScheduleRun)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();
BENCHMARK(OneShotQueueOnly)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();
BENCHMARK(LongLivedScheduleRun)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(TimeoutAddCancel<false>)
    ->Name("TimeoutAddCancel_Snooze")
    ->ArgName("Timeouts")
    ->Arg(1000)
    ->Arg(4096)
    ->Arg(30000)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime();
BENCHMARK(TimeoutAddCancel<true>)
    ->Name("TimeoutAddCancel_SnoozeAndWait")
    ->ArgName("Timeouts")
    ->Arg(1000)
    ->Arg(4096)
    ->Arg(30000)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime();

}  // namespace
