// Benchmarks of the durability layer (issue 5's targets, docs/benchmarks.md):
//  - AddAckCommit: a majority SyncWrite added, acked by the replica and
//    committed, through BucketDurability in event-driven mode (so the timer
//    re-arms on every head change are included). Each thread writes to its
//    own vbucket. Every 4096 writes the thread expels its checkpoint, as a
//    replication cursor would let it — that cost is amortised in.
//    The stamp argument picks the clock deadlines are stamped with (issue 16,
//    "never early"): 0 coarse (early by up to a tick: the old behaviour),
//    1 coarse + its resolution (rounded up), 2 precise (the server's choice);
//    the polling clock is coarse in all three.
//  - DeadlineStamp/{coarse+resolution,precise,syscall}: the stamp alone — a
//    clock read plus the timeout — on each clock; syscall models a machine
//    whose clock source is not readable from user space (HPET).
//  - ProcessTimeoutNoneExpired/N/mixed: the polling path's call on a vbucket
//    that tracks N writes, none expired; with mixed=1 every other write has a
//    shorter timeout than the one before it, so half of them wait in the heap
//    of writes that may expire behind the head.
//  - TimeoutRearm: the event-driven timer told of a new head deadline (later
//    than the one it is armed for, the common case), and Disarm (told kNever).
//  - CommitLatencyRecord: the commit-latency metric's cost per commit (a
//    real-time clock read and CommitLatency::record), 1 and 2 threads.
//  - MemoryPerSyncWrite: bytes the monitor allocates per in-flight write,
//    beyond the prepare the checkpoint holds anyway (glibc's count of heap in
//    use, so allocator overhead is included); the prepare's own checkpoint
//    cost is reported beside it.
#include <malloc.h>
#include <atomic>
#include <chrono>

#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "clock/coarse_clock.h"
#include "clock/manual_clock.h"
#include "clock/precise_clock.h"
#include "clock/syscall_clock.h"
#include "durability/active_durability_monitor.h"
#include "durability/bucket_durability.h"
#include "durability/bucket_timeout_task.h"
#include "durability/commit_latency.h"

namespace {

// Heap bytes in use, as glibc counts them (chunk headers included).
int64_t heapInUse() { return static_cast<int64_t>(mallinfo2().uordblks); }

}  // namespace

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;

ReplicationTopology oneReplica() {
  return ReplicationTopology::create({ReplicationChain{"active", {"replica1"}}}).value();
}

std::vector<std::string> keys(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("key" + std::to_string(i));
  return out;
}

// The coarse clock rounded up by its resolution: a reading never behind real
// time while the coarse clock lags by less than a tick (the alternative to
// stamping with the precise clock, measured beside it).
struct CoarseRoundedUpClock {
  static constexpr bool on_steady_timeline = true;
  static clock::TimePoint now() noexcept {
    static const clock::Duration tick = clock::CoarseClock::resolution();
    return clock::CoarseClock::now() + tick;
  }
};

clock::ClockRef stampClock(int64_t which) {
  switch (which) {
    case 0:
      return clock::ClockRef::of<clock::CoarseClock>();
    case 1:
      return clock::ClockRef::of<CoarseRoundedUpClock>();
    case 2:
      return clock::ClockRef::of<clock::PreciseClock>();
    default:
      return clock::ClockRef::of<clock::SyscallClock>();
  }
}

// One bucket shared by the benchmark's threads.
struct AddAckCommitFixture {
  explicit AddAckCommitFixture(int64_t stamp) {
    (void)config.loadJson({{"max_vbuckets", 8}, {"durability_timeout_mode", "event-driven"}});
    map = std::make_unique<vbucket::VBucketMap>(config, vbucket::VBucketState::kActive);
    bucket = std::make_unique<BucketDurability>(
        "bench", config, *map, pool, oneReplica(),
        TimeoutClocks{stampClock(stamp), clock::ClockRef::of<clock::CoarseClock>()});
  }
  executor::ExecutorPool pool{1};
  config::Configuration config{config::Scope::kBucket};
  std::unique_ptr<vbucket::VBucketMap> map;
  std::unique_ptr<BucketDurability> bucket;
};

AddAckCommitFixture* g_fixture = nullptr;

void BM_AddAckCommit(benchmark::State& state) {
  // Set up by thread 0; the others first touch it inside the loop, which
  // Google Benchmark starts for all threads together.
  if (state.thread_index() == 0) g_fixture = new AddAckCommitFixture(state.range(0));
  const auto vb = static_cast<Vbid>(state.thread_index());
  const std::vector<std::string> names = keys(1024);
  uint64_t completed = 0;
  size_t i = 0;
  for (auto _ : state) {
    AddAckCommitFixture& f = *g_fixture;
    const WriteResult r = f.bucket->write(
        vb, WriteRequest{WriteOp::kSet, names[i & 1023], "value", i, Requirements{}},
        [&completed](const Resolution&) { ++completed; });
    f.bucket->seqnoAcknowledged(vb, "replica1", r.seqno);
    if ((++i & 4095) == 0) f.map->at(vb).checkpointManager().extractItemsToExpel();
  }
  if (completed != i) state.SkipWithError("a write did not commit");
  state.SetItemsProcessed(static_cast<int64_t>(i));
  // The loop also ends for all threads together.
  if (state.thread_index() == 0) {
    delete g_fixture;
    g_fixture = nullptr;
  }
}
BENCHMARK(BM_AddAckCommit)
    ->Name("SyncWriteBench/AddAckCommit")
    ->ArgName("stamp")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Threads(1)
    ->Threads(2);

// What a commit with a client pays for the commit-latency metric: the
// real-time clock read and CommitLatency::record (each thread its shard).
void BM_CommitLatencyRecord(benchmark::State& state) {
  static CommitLatency latency;
  int64_t start = 0;
  for (auto _ : state) {
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    if (start == 0) start = now - 20'000'000;
    latency.record(Level::kMajority, now - start);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CommitLatencyRecord)
    ->Name("SyncWriteBench/CommitLatencyRecord")
    ->Threads(1)
    ->Threads(2);

template <typename Clock>
void BM_DeadlineStamp(benchmark::State& state) {
  const Timeout timeout = *Timeout::fromMillis(30000);
  for (auto _ : state) {
    benchmark::DoNotOptimize(timeout.deadline(Clock::now(), 30000ms));
  }
}
BENCHMARK(BM_DeadlineStamp<CoarseRoundedUpClock>)
    ->Name("SyncWriteBench/DeadlineStamp/coarse+resolution");
BENCHMARK(BM_DeadlineStamp<clock::PreciseClock>)->Name("SyncWriteBench/DeadlineStamp/precise");
BENCHMARK(BM_DeadlineStamp<clock::SyscallClock>)->Name("SyncWriteBench/DeadlineStamp/syscall");

void BM_ProcessTimeoutNoneExpired(benchmark::State& state) {
  clock::ManualClock clock;
  DurabilitySettings settings;
  vbucket::VBucket vb(0, vbucket::VBucketState::kActive);
  ActiveDurabilityMonitor monitor(vb, settings, oneReplica());
  const auto n = static_cast<size_t>(state.range(0));
  const bool mixed = state.range(1) != 0;
  for (size_t i = 0; i < n; ++i) {
    ResolvedWrites resolved;
    const uint16_t timeout_ms = mixed && i % 2 == 1 ? 30000 : 60000;
    const std::string key = "key" + std::to_string(i);
    monitor.write(
        WriteRequest{WriteOp::kSet, key, "v", 0,
                     Requirements{Level::kMajority, *Timeout::fromMillis(timeout_ms)}},
        // A SyncWrite with no completion is refused (kInvalidLevel).
        [](const Resolution&) {}, clock.now(), resolved);
  }
  clock.advance(1s);
  ResolvedWrites resolved;
  for (auto _ : state) {
    monitor.processTimeout(clock.now(), resolved);
    benchmark::DoNotOptimize(resolved.empty());
  }
  if (monitor.numTracked() != n) state.SkipWithError("a write expired");
}
BENCHMARK(BM_ProcessTimeoutNoneExpired)
    ->Name("SyncWriteBench/ProcessTimeoutNoneExpired")
    ->ArgNames({"n", "mixed"})
    ->Args({1000, 0})
    ->Args({100000, 0})
    ->Args({1000, 1})
    ->Args({100000, 1});

// A scheduled bucket timeout task, told of deadlines directly.
struct RearmFixture {
  RearmFixture() : in_flight(1), monitor(vb, settings, oneReplica(), &in_flight) {
    task = std::make_shared<BucketTimeoutTask>(
        owner, pool, in_flight,
        [this](vbucket::Vbid) -> ActiveDurabilityMonitor& { return monitor; },
        clock::ClockRef::of<clock::PreciseClock>(), TimeoutClocks::kDefaultTimerSlack,
        /*max_slice=*/std::chrono::milliseconds(2), counters);
    pool.schedule(task);
  }
  ~RearmFixture() { pool.unregisterTaskable(owner); }
  executor::ExecutorPool pool{1};
  executor::NullTaskable owner;
  DurabilitySettings settings;
  vbucket::VBucket vb{0, vbucket::VBucketState::kActive};
  vbucket::VBucketSet in_flight;
  ActiveDurabilityMonitor monitor;
  TimeoutTaskCounters counters;
  std::shared_ptr<BucketTimeoutTask> task;
};

void BM_TimeoutRearm(benchmark::State& state) {
  RearmFixture f;
  // Armed once, an hour ahead; every deadline told after it is later (the
  // first write of another vbucket, after the bucket's earliest): one load.
  clock::TimePoint deadline = clock::PreciseClock::now() + 1h;
  f.task->nextDeadlineEarlier(deadline);
  for (auto _ : state) {
    deadline += 1ms;
    f.task->nextDeadlineEarlier(deadline);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TimeoutRearm)->Name("SyncWriteBench/TimeoutRearm");

void BM_TimeoutArmEarlier(benchmark::State& state) {
  RearmFixture f;
  // Every deadline earlier than the armed one: the compare-and-swap and the
  // re-arm of the pool's timer (all in one slack slot, so the wake time does
  // not move after the first).
  clock::TimePoint deadline = clock::PreciseClock::now() + 1h;
  for (auto _ : state) {
    deadline -= clock::Duration(1);
    f.task->nextDeadlineEarlier(deadline);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TimeoutArmEarlier)->Name("SyncWriteBench/TimeoutArmEarlier");

void BM_MemoryPerSyncWrite(benchmark::State& state) {
  constexpr size_t kWrites = 100000;
  const std::vector<std::string> names = keys(kWrites);
  for (auto _ : state) {
    clock::ManualClock clock;
    DurabilitySettings settings;
    // Baseline: the prepares alone, queued in a checkpoint as the monitor
    // queues them (each block holding the entry its commit or abort will
    // take: checkpoint memory, reported separately below).
    vbucket::VBucket plain(0, vbucket::VBucketState::kActive);
    const int64_t before_plain = heapInUse();
    for (const std::string& k : names) {
      plain.checkpointManager().queuePrepare(k, "v", 0);  // the checkpoint keeps it
    }
    const int64_t plain_bytes = heapInUse() - before_plain;

    vbucket::VBucket vb(1, vbucket::VBucketState::kActive);
    ActiveDurabilityMonitor monitor(vb, settings, oneReplica());
    uint64_t calls = 0;
    const int64_t before = heapInUse();
    for (const std::string& k : names) {
      ResolvedWrites resolved;
      monitor.write(
          WriteRequest{WriteOp::kSet, k, "v", 0, Requirements{}},
          [&calls](const Resolution&) { ++calls; }, clock.now(), resolved);
    }
    const int64_t tracked_bytes = heapInUse() - before;
    state.counters["bytes_per_write"] =
        static_cast<double>(tracked_bytes - plain_bytes) / static_cast<double>(kWrites);
    state.counters["tracked"] = static_cast<double>(monitor.numTracked());
    // The prepare's log record, key and value included (all inline here):
    // what any checkpoint pays for a prepare, shown for context.
    state.counters["checkpoint_bytes_per_prepare"] =
        static_cast<double>(plain_bytes) / static_cast<double>(kWrites);
  }
}
BENCHMARK(BM_MemoryPerSyncWrite)->Name("SyncWriteBench/MemoryPerSyncWrite")->Iterations(1);

}  // namespace
}  // namespace syncwrite::durability
