// PreciseClock: std::chrono::steady_clock (CLOCK_MONOTONIC through the vDSO on
// Linux). Nanosecond resolution; a read costs tens of nanoseconds when the
// kernel's clock source is the TSC, and a system call when it is not.
#pragma once

#include "clock/time.h"

namespace syncwrite::clock {

struct PreciseClock {
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = TimePoint;
  static constexpr bool is_steady = true;
  // Readings are steady_clock times (see ClockRef::onSteadyTimeline).
  static constexpr bool on_steady_timeline = true;

  static time_point now() noexcept { return std::chrono::steady_clock::now(); }
};

}  // namespace syncwrite::clock
