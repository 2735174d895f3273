// Benchmarks of the durability layer (issue 5's targets, docs/benchmarks.md):
//  - AddAckCommit: a majority SyncWrite added, acked by the replica and
//    committed, through BucketDurability in event-driven mode (so the timer
//    re-arms on every head change are included). Each thread writes to its
//    own vbucket. Every 4096 writes the thread expels its checkpoint, as a
//    replication cursor would let it — that cost is amortised in.
//  - ProcessTimeoutNoneExpired/N: the polling path's call on a vbucket that
//    tracks N writes, none expired.
//  - TimeoutRearm: the event-driven timer told of a new head deadline (later
//    than the one it is armed for, the common case), and Disarm (told kNever).
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
#include "durability/active_durability_monitor.h"
#include "durability/bucket_durability.h"
#include "durability/vbucket_timeout_task.h"

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

// One bucket shared by the benchmark's threads.
struct AddAckCommitFixture {
  AddAckCommitFixture() {
    (void)config.loadJson({{"max_vbuckets", 8}, {"durability_timeout_mode", "event-driven"}});
    map = std::make_unique<vbucket::VBucketMap>(config, vbucket::VBucketState::kActive);
    bucket = std::make_unique<BucketDurability>("bench", config, *map, pool, oneReplica(),
                                                clock::ClockRef::of<clock::CoarseClock>());
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
  if (state.thread_index() == 0) g_fixture = new AddAckCommitFixture();
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
BENCHMARK(BM_AddAckCommit)->Name("SyncWriteBench/AddAckCommit")->Threads(1)->Threads(2);

void BM_ProcessTimeoutNoneExpired(benchmark::State& state) {
  clock::ManualClock clock;
  DurabilitySettings settings;
  vbucket::VBucket vb(0, vbucket::VBucketState::kActive);
  ActiveDurabilityMonitor monitor(vb, settings, oneReplica());
  const auto n = static_cast<size_t>(state.range(0));
  for (size_t i = 0; i < n; ++i) {
    ResolvedWrites resolved;
    monitor.write(WriteRequest{WriteOp::kSet, "key" + std::to_string(i), "v", 0,
                               Requirements{Level::kMajority, *Timeout::fromMillis(60000)}},
                  nullptr, clock.now(), resolved);
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
    ->Arg(1000)
    ->Arg(100000);

// A scheduled, attached timeout task, told of head changes directly.
struct RearmFixture {
  RearmFixture() : monitor(vb, settings, oneReplica()) {
    task = std::make_shared<VBucketTimeoutTask>(
        owner, pool, monitor, clock::ClockRef::of<clock::CoarseClock>(), counters);
    pool.schedule(task);
  }
  ~RearmFixture() { pool.unregisterTaskable(owner); }
  executor::ExecutorPool pool{1};
  executor::NullTaskable owner;
  DurabilitySettings settings;
  vbucket::VBucket vb{0, vbucket::VBucketState::kActive};
  ActiveDurabilityMonitor monitor;
  TimeoutTaskCounters counters;
  std::shared_ptr<VBucketTimeoutTask> task;
};

void BM_TimeoutRearm(benchmark::State& state) {
  RearmFixture f;
  // Armed once far ahead; each head change then moves it later still.
  clock::TimePoint deadline = clock::CoarseClock::now() + 1h;
  f.task->nextDeadlineChanged(deadline);
  for (auto _ : state) {
    deadline += 1ms;
    f.task->nextDeadlineChanged(deadline);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TimeoutRearm)->Name("SyncWriteBench/TimeoutRearm");

void BM_TimeoutDisarmRearm(benchmark::State& state) {
  RearmFixture f;
  const clock::TimePoint deadline = clock::CoarseClock::now() + 1h;
  for (auto _ : state) {
    f.task->nextDeadlineChanged(deadline);       // the first write of an idle vbucket
    f.task->nextDeadlineChanged(clock::kNever);  // ... committed
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_TimeoutDisarmRearm)->Name("SyncWriteBench/TimeoutRearmFromIdle");

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
