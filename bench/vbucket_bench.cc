// vbucket_bench: the cost of checkpoint expel (splice vs copy under the lock)
// and of one capped visitor pass over empty vbuckets on each clock.
//
//   CheckpointBench/ExtractItemsToExpel/N       items leave by relinking: O(1)
//   CheckpointBench/ExtractItemsToExpelCopy/N   the baseline: copy, then erase
//   CheckpointBench/ExtractOneAfterTraffic/M    the control: expel 1 item after
//                                               M items went through another
//                                               manager (same cache state as
//                                               ExtractItemsToExpel/M, N = 1)
//   CheckpointBench/TimedNothingAfterFill/N     the instrument: the same fill
//                                               and read as ExtractItemsToExpel/N,
//                                               then the two clock reads with
//                                               nothing between them
//   VisitorBench/CappedVisit/<clock>            1024 empty active vbuckets, each
//                                               visit marked cheap, as the polling
//                                               visitor marks one with no SyncWrite
//                                               (the clock is then read after every
//                                               visit only if its reading moves)
//
// The checkpoint benchmarks time only the extraction call — lock, detach,
// unlock — with manual timing: filling the checkpoint before it and freeing
// the expelled items after it are outside the timed region (PauseTiming
// would itself cost more than the O(1) extraction).
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "clock/clock_ref.h"
#include "clock/coarse_clock.h"
#include "clock/precise_clock.h"
#include "clock/syscall_clock.h"
#include "vbucket/checkpoint_manager.h"
#include "vbucket/vbucket_map.h"
#include "vbucket/vbucket_visit_pass.h"

namespace {

using namespace syncwrite;
using namespace syncwrite::vbucket;

// The flusher reads everything, in batches, until nothing is left: all of it
// may go. Its last, empty, read leaves the manager's bookkeeping where a real
// reader would leave it before expelling. What differs between N is then the
// extraction's work, plus the cache misses the O(N) fill caused (N = 10000 is
// about 2 MB of entries and items: L2 here).
void queueAndRead(CheckpointManager& manager, int n) {
  for (int i = 0; i < n; ++i) manager.queue(QueueOp::kMutation, "key", "value", 1);
  while (!manager.readItems("persistence", 256).empty()) {
  }
}

void fillAndRead(CheckpointManager& manager, int n) {
  manager.registerCursor("persistence");
  queueAndRead(manager, n);
}

// Runs fn() between two clock reads and records that as the iteration's
// (manual) time; returns what fn() returned, to be dropped after the timing.
template <typename Fn>
auto timeCall(benchmark::State& state, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  auto result = fn();
  const auto end = std::chrono::steady_clock::now();
  state.SetIterationTime(std::chrono::duration<double>(end - start).count());
  return result;
}

void BM_ExtractItemsToExpel(benchmark::State& state, ExpelMethod method) {
  const auto n = static_cast<int>(state.range(0));
  size_t expelled = 0;
  for (auto _ : state) {
    CheckpointManager manager(CheckpointOptions{.max_items_per_checkpoint = 0});
    fillAndRead(manager, n);
    ExpelledItems items = timeCall(state, [&] { return manager.extractItemsToExpel(method); });
    expelled += items.count();
  }
  if (expelled != static_cast<size_t>(n) * state.iterations()) state.SkipWithError("miscount");
  state.SetItemsProcessed(static_cast<int64_t>(expelled));
}

// What the timing itself costs in ExtractItemsToExpel/N's state: the same
// fill and read, then the two clock reads with nothing between them (the
// extraction follows, untimed, so each iteration ends as there). The first
// clock read after an O(N) fill finds its own code and data cold, and the
// part of it after the counter is read falls inside the window: this row is
// the floor under ExtractItemsToExpel/N that no change to the extraction
// can lower.
void BM_TimedNothingAfterFill(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  size_t expelled = 0;
  for (auto _ : state) {
    CheckpointManager manager(CheckpointOptions{.max_items_per_checkpoint = 0});
    fillAndRead(manager, n);
    timeCall(state, [] { return 0; });  // nothing between the two reads
    expelled += manager.extractItemsToExpel().count();
  }
  if (expelled != static_cast<size_t>(n) * state.iterations()) state.SkipWithError("miscount");
}

// The control for the N-dependence of the above: the extraction of a single
// item, timed after `traffic` items were queued and read through *another*
// manager. Were ExtractItemsToExpel/10000 dearer than /1 because of N, this
// would cost what /1 does; it costs what /10000 does when the difference is
// the state the O(N) fill leaves (caches and TLBs cold for the extraction's
// code and the manager's lines), which the extraction cannot avoid.
void BM_ExtractOneAfterTraffic(benchmark::State& state) {
  const auto traffic = static_cast<int>(state.range(0));
  size_t expelled = 0;
  for (auto _ : state) {
    CheckpointManager manager(CheckpointOptions{.max_items_per_checkpoint = 0});
    manager.registerCursor("persistence");
    // Kept until after the timed call, like the fill of ExtractItemsToExpel.
    CheckpointManager other(CheckpointOptions{.max_items_per_checkpoint = 0});
    fillAndRead(other, traffic);
    queueAndRead(manager, 1);
    ExpelledItems items = timeCall(state, [&] { return manager.extractItemsToExpel(); });
    expelled += items.count();
  }
  if (expelled != static_cast<size_t>(state.iterations())) state.SkipWithError("miscount");
}

// Manual time would let the library run millions of iterations of the O(1)
// case, each paying an O(N) fill; a fixed count bounds the run.
void expelArgs(benchmark::internal::Benchmark* b) {
  for (int n : {1, 10, 100, 1000, 10000}) b->Arg(n);
  b->UseManualTime();
}

BENCHMARK_CAPTURE(BM_ExtractItemsToExpel, splice, ExpelMethod::kSplice)
    ->Name("CheckpointBench/ExtractItemsToExpel")
    ->Apply(expelArgs)
    ->Iterations(2000);
BENCHMARK_CAPTURE(BM_ExtractItemsToExpel, copy, ExpelMethod::kCopy)
    ->Name("CheckpointBench/ExtractItemsToExpelCopy")
    ->Apply(expelArgs)
    ->Iterations(2000);
BENCHMARK(BM_ExtractOneAfterTraffic)
    ->Name("CheckpointBench/ExtractOneAfterTraffic")
    ->Arg(10000)
    ->UseManualTime()
    ->Iterations(2000);
BENCHMARK(BM_TimedNothingAfterFill)
    ->Name("CheckpointBench/TimedNothingAfterFill")
    ->Arg(1)
    ->Arg(10000)
    ->UseManualTime()
    ->Iterations(2000);

// What a polling visitor does to a vbucket with no SyncWrite: one atomic load.
void visitEmpty(VBucket& vb) { benchmark::DoNotOptimize(vb.highSeqno()); }

class NoPauseCheckVisitor final : public VBucketVisitor {
 public:
  void visitBucket(VBucket& vb) override { visitEmpty(vb); }
};

// The polling timeout visitor's visit of a vbucket with no SyncWrite, which
// it marks cheap (durability/polling_timeout_task.cc).
class CappedVisitor final : public CappedDurationVBucketVisitor {
 public:
  using CappedDurationVBucketVisitor::CappedDurationVBucketVisitor;
  void visitBucket(VBucket& vb) override {
    visitEmpty(vb);
    noteCheapVisit();
  }
};

constexpr size_t kVBuckets = 1024;

void runPasses(benchmark::State& state, VBucketVisitor& visitor) {
  VBucketMap map(kVBuckets, VBucketState::kActive);
  VBucketVisitPass pass(map, visitor, {VBucketState::kActive});
  for (auto _ : state) {
    pass.restart();
    if (pass.runChunk() != VBucketVisitPass::Progress::kDone) state.SkipWithError("paused");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kVBuckets));
}

void BM_CappedVisitNone(benchmark::State& state) {
  NoPauseCheckVisitor visitor;
  runPasses(state, visitor);
}

void BM_CappedVisit(benchmark::State& state, clock::ClockRef clock) {
  // Long enough never to pause: the benchmark measures the checks, not yields.
  CappedVisitor visitor(clock, std::chrono::hours(1));
  runPasses(state, visitor);
}

BENCHMARK(BM_CappedVisitNone)->Name("VisitorBench/CappedVisit/none");
BENCHMARK_CAPTURE(BM_CappedVisit, coarse, clock::ClockRef::of<clock::CoarseClock>())
    ->Name("VisitorBench/CappedVisit/coarse");
BENCHMARK_CAPTURE(BM_CappedVisit, precise, clock::ClockRef::of<clock::PreciseClock>())
    ->Name("VisitorBench/CappedVisit/precise");
BENCHMARK_CAPTURE(BM_CappedVisit, syscall, clock::ClockRef::of<clock::SyscallClock>())
    ->Name("VisitorBench/CappedVisit/syscall");

}  // namespace
