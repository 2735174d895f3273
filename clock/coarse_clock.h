// CoarseClock: CLOCK_MONOTONIC_COARSE on Linux.
//
// The kernel updates this clock once per tick and exposes it through the vDSO,
// so a read is a few loads with no system call whatever the clock source (TSC,
// HPET, a hypervisor's). The price is resolution: typically 1–4 ms, reported by
// resolution(). Use it where a decision tolerates that error — "have I run for
// longer than 25 ms?" — and is taken often. Elsewhere than Linux it falls back
// to PreciseClock.
#pragma once

#include "clock/time.h"

namespace syncwrite::clock {

struct CoarseClock {
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = TimePoint;
  static constexpr bool is_steady = true;
  // Readings are steady_clock times (see ClockRef::onSteadyTimeline).
  static constexpr bool on_steady_timeline = true;

  static time_point now() noexcept;

  // The clock's resolution as reported by clock_getres(); readings advance in
  // steps of (at least) this much. 1 ns on the precise fallback.
  static duration resolution() noexcept;
};

}  // namespace syncwrite::clock
