// clock_bench: what one now() costs on each clock, called directly and through
// a ClockRef (the handle components are given); and CoarseLagAfterSleep, how
// far the coarse clock lags the precise one when a thread has just woken from
// a sleep (a server thread woken by a client's request, or by a timer) —
// what decides whether rounding a coarse deadline up by one resolution is
// enough to be never early (issue 16; docs/benchmarks.md).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

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

// Each iteration sleeps 0..3 ms, then reads coarse and precise. Counters:
// the resolution, the largest lag seen, and the share of reads that lagged by
// a whole resolution or more (rounding up by one resolution would have been
// early for a deadline stamped at that moment).
void BM_CoarseLagAfterSleep(benchmark::State& state) {
  const Duration resolution = CoarseClock::resolution();
  std::mt19937 rng(16);
  Duration max_lag{0};
  int64_t beyond = 0;
  for (auto _ : state) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    const TimePoint coarse = CoarseClock::now();
    const TimePoint precise = PreciseClock::now();
    max_lag = std::max(max_lag, precise - coarse);
    if (precise - coarse >= resolution) ++beyond;
  }
  using Us = std::chrono::duration<double, std::micro>;
  state.counters["resolution_us"] = Us(resolution).count();
  state.counters["max_lag_us"] = Us(max_lag).count();
  state.counters["lag_ge_resolution"] =
      static_cast<double>(beyond) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_CoarseLagAfterSleep)->Name("CoarseLagAfterSleep")->Iterations(1000);

}  // namespace
