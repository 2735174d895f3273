// TickedCoarseClock: the coarse clock republished into one atomic by a ticker
// thread, so that a read is a single relaxed load — no call, no vDSO.
//
// Why: the capped visitor asks "have I run too long?" between every two
// vbuckets, and visiting an empty vbucket costs ~2.5 ns (one atomic load).
// Even CoarseClock (~5 ns through the vDSO) triples that pass; a load of a
// value someone else keeps fresh does not. The price is a thread, so the
// ticker runs only while it is wanted:
//
//   TickedCoarseClock::acquire();   // a lease: the ticker runs
//   ... TickedCoarseClock::now() ... // fresh to within about one tick
//   TickedCoarseClock::release();
//
// Freshness: while at least one lease is held, now() is CoarseClock::now() as
// read by the ticker at its last tick (every tick(), 1 ms), so it lags the
// coarse clock by up to one tick plus the ticker's scheduling delay (a
// starved ticker lags more). acquire() itself republishes the coarse clock
// when the ticker was parked, so a lease never starts from a stale value.
// Without a lease now() may be arbitrarily stale: it is not a clock then.
// Readings never go backwards (every publication is a max).
//
// Cost: now() is one relaxed atomic load. acquire() and release() are one
// atomic read-modify-write each; acquire() also takes a mutex and wakes the
// ticker when the ticker is parked. The ticker parks after kIdleTicksBeforePark
// ticks during which no lease was taken and none was held, so an idle process
// has a parked (blocked, zero-CPU) ticker, or none if no lease was ever taken.
// Measured on the KVM guest of docs/benchmarks.md (a ticker wake-up costs
// 15-30 us of CPU there): a lease every 25 ms (one polling bucket) costs the
// ticker ~0.4% of a core; leases closer than a few ticks apart (many polling
// buckets) keep it ticking, 1.5-2% of a core.
//
// The ticker thread is named "sw-clock-tick" (pthread_setname_np), started on
// the first acquire() and never joined: its state is deliberately leaked, so
// static destructors running at exit (in any order, possibly while another
// static still holds a lease) never race a destroyed ticker; the process exit
// ends the thread.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <atomic>

#include "clock/time.h"

namespace syncwrite::clock {

namespace ticked_coarse_detail {
// Nanoseconds since the steady epoch, as last published. Constant-initialised,
// so now() may be called at any time (it reads 0 before the first lease).
extern std::atomic<Duration::rep> published;
}  // namespace ticked_coarse_detail

struct TickedCoarseClock {
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = TimePoint;
  static constexpr bool is_steady = true;

  // Idle ticks (no lease taken, none held) after which the ticker parks.
  static constexpr int kIdleTicksBeforePark = 3;

  // The last published coarse time. Meaningful only while the caller holds a
  // lease (see the file comment). One relaxed load.
  static time_point now() noexcept {
    return time_point(duration(ticked_coarse_detail::published.load(std::memory_order_relaxed)));
  }

  // Takes a lease: the ticker runs (starting or waking it if needed) until the
  // matching release(). When it returns, now() is at least the coarse time
  // read by this call (if the ticker was parked) or lags by about one tick.
  static void acquire() noexcept;
  // Returns a lease taken with acquire(). Requires one to be held.
  static void release() noexcept;

  // The ticker's period.
  static duration tick() noexcept;
  // Whether the ticker thread is running (not parked, and started). For
  // diagnostics and tests: it is a snapshot.
  static bool ticking() noexcept;
};

}  // namespace syncwrite::clock
