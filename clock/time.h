// The time vocabulary shared by every clock in syncwrite.
//
// All clocks here measure the same thing — monotonic time since an unspecified
// epoch (boot, on Linux) — and report it in the same type as
// std::chrono::steady_clock. Time points from different clocks can therefore be
// compared and mixed, and the executor's timers (which use steady_clock) accept
// them directly. A coarse reading may lag a precise one by up to the coarse
// clock's resolution; it never runs ahead of it.
#pragma once

#include <chrono>

namespace syncwrite::clock {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;

// A time point that no clock reaches: "never" / "sleep forever".
inline constexpr TimePoint kNever = TimePoint::max();
// kNever as a count of Duration ticks since the epoch, for deadlines kept in atomics.
inline constexpr Duration::rep kNeverRep = kNever.time_since_epoch().count();

}  // namespace syncwrite::clock
