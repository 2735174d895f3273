// clock_bench: what one now() costs on each clock, called directly and through
// a ClockRef (the handle components are given).
#include <benchmark/benchmark.h>

#include "clock/clock_ref.h"
#include "clock/coarse_clock.h"
#include "clock/manual_clock.h"
#include "clock/precise_clock.h"
#include "clock/syscall_clock.h"

namespace {

using namespace syncwrite::clock;

template <typename C>
void BM_Now(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(C::now());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Now<PreciseClock>)->Name("ClockNow/precise");
BENCHMARK(BM_Now<CoarseClock>)->Name("ClockNow/coarse");
BENCHMARK(BM_Now<SyscallClock>)->Name("ClockNow/syscall");

void BM_ManualNow(benchmark::State& state) {
  ManualClock clock;
  for (auto _ : state) benchmark::DoNotOptimize(clock.now());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ManualNow)->Name("ClockNow/manual");

void BM_RefNow(benchmark::State& state, ClockRef ref) {
  for (auto _ : state) benchmark::DoNotOptimize(ref.now());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_RefNow, precise, ClockRef::of<PreciseClock>())->Name("ClockRefNow/precise");
BENCHMARK_CAPTURE(BM_RefNow, coarse, ClockRef::of<CoarseClock>())->Name("ClockRefNow/coarse");
BENCHMARK_CAPTURE(BM_RefNow, syscall, ClockRef::of<SyscallClock>())->Name("ClockRefNow/syscall");

}  // namespace
