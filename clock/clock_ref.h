// ClockRef: how a component is handed "a clock".
//
//   class Visitor {
//    public:
//     explicit Visitor(clock::ClockRef clock) : clock_(clock) {}
//     ... clock_.now() ...
//   };
//   Visitor production(clock::ClockRef::of<clock::CoarseClock>());
//   clock::ManualClock manual;
//   Visitor test(clock::ClockRef::of(manual));
//
// Why a type-erased handle and not a template parameter: the components that
// read time (visitors, durability monitors, timeout tasks) are large, live in
// .cc files, and are chosen at run time (the polling visitor's clock is a
// config key). A template parameter would push each of them into headers and
// multiply their instantiations; a virtual interface would need an object per
// static clock and an allocation or a global to hold it. ClockRef is two
// words — a function pointer and an optional object pointer — copied by value,
// never allocating; now() is one indirect call, which the clock benchmark
// measures beside the direct calls (it is small next to any clock read).
//
// A ClockRef does not own a ManualClock it refers to: the clock must outlive it.
#pragma once

#include <concepts>

#include "clock/precise_clock.h"
#include "clock/time.h"

namespace syncwrite::clock {

class ManualClock;

// A clock whose now() is static and returns our TimePoint.
template <typename C>
concept StaticClock = requires {
  { C::now() } -> std::same_as<TimePoint>;
};

class ClockRef {
 public:
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = TimePoint;
  static constexpr bool is_steady = true;

  // The precise clock. A default-constructed ClockRef is always usable.
  ClockRef() noexcept : ClockRef(of<PreciseClock>()) {}

  // A handle to a clock with a static now() (Precise, Coarse, Syscall).
  template <StaticClock C>
  static ClockRef of() noexcept {
    // A static clock needs no object: `self` only marks the steady timeline.
    return ClockRef(
        +[](const void*) noexcept { return C::now(); },
        onSteadyTimeline<C>() ? &kSteadyTimelineTag : nullptr);
  }

  // A handle to a clock object, e.g. a test's ManualClock. `c` must outlive the
  // handle and its copies.
  template <typename C>
  requires requires(const C& c) {
    { c.now() } -> std::same_as<TimePoint>;
  }
  static ClockRef of(const C& c) noexcept {
    static_assert(!onSteadyTimeline<C>(), "a clock object is not on the steady timeline");
    return ClockRef(
        +[](const void* self) noexcept { return static_cast<const C*>(self)->now(); }, &c);
  }

  time_point now() const noexcept { return now_(self_); }

  // True when readings are times on std::chrono::steady_clock's timeline
  // (CLOCK_MONOTONIC on Linux), as the precise, coarse and syscall clocks'
  // are: a deadline on this clock is then also a steady_clock time, which
  // the executor's timers can take as it is. False for a manual clock.
  bool onSteadyTimeline() const noexcept { return self_ == &kSteadyTimelineTag; }

 private:
  using NowFn = TimePoint (*)(const void*) noexcept;
  ClockRef(NowFn fn, const void* self) noexcept : now_(fn), self_(self) {}

  static constexpr char kSteadyTimelineTag = 0;

  // A clock declares it with `static constexpr bool on_steady_timeline = true`.
  template <typename C>
  static constexpr bool onSteadyTimeline() noexcept {
    if constexpr (requires { C::on_steady_timeline; }) {
      return C::on_steady_timeline;
    } else {
      return false;
    }
  }

  NowFn now_;
  const void* self_;  // the clock object; for a static clock, null or the tag
};

}  // namespace syncwrite::clock
