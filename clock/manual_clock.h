// ManualClock: a clock for tests. Time moves only when the test says so.
//
// Thread-safe: any thread may read now() while another advances it; each read
// sees some value the clock has held, and readings never go backwards.
// Unlike the other clocks, now() is a member: each test owns its own clock.
#pragma once

#include <atomic>

#include "clock/time.h"

namespace syncwrite::clock {

class ManualClock {
 public:
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = TimePoint;
  static constexpr bool is_steady = true;

  // Starts at `start`. The default start is one hour past the epoch, so that
  // "now minus a little" is still a valid, positive time point.
  explicit ManualClock(time_point start = time_point(std::chrono::hours(1))) noexcept
      : now_(start.time_since_epoch().count()) {}

  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  time_point now() const noexcept {
    return time_point(duration(now_.load(std::memory_order_acquire)));
  }

  // Moves time forward by `d`. Requires d >= 0 (a negative step would break
  // monotonicity): throws std::invalid_argument and changes nothing otherwise.
  void advance(duration d);

  // Moves time to `t`. Requires t >= now(): throws std::invalid_argument and
  // changes nothing otherwise.
  void set(time_point t);

 private:
  std::atomic<rep> now_;
};

}  // namespace syncwrite::clock
