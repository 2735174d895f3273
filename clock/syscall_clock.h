// SyscallClock: CLOCK_MONOTONIC read through syscall(SYS_clock_gettime),
// bypassing the vDSO.
//
// Every read is a real system call. It models the machines whose kernel clock
// source cannot be read from user space (HPET, some hypervisors), where
// steady_clock::now() costs a microsecond or more. Benchmarks and diagnostics
// use it to show what a hot loop that reads the precise clock would cost there;
// production code has no reason to. Elsewhere than Linux it is PreciseClock.
#pragma once

#include "clock/time.h"

namespace syncwrite::clock {

struct SyscallClock {
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = TimePoint;
  static constexpr bool is_steady = true;
  // Readings are steady_clock times (see ClockRef::onSteadyTimeline).
  static constexpr bool on_steady_timeline = true;

  static time_point now() noexcept;
};

}  // namespace syncwrite::clock
