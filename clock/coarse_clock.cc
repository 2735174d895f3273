#include "clock/coarse_clock.h"

#include "clock/precise_clock.h"

#if defined(__linux__)
#include <time.h>
#endif

namespace syncwrite::clock {

#if defined(__linux__) && defined(CLOCK_MONOTONIC_COARSE)

namespace {
Duration fromTimespec(const timespec& ts) {
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}
}  // namespace

CoarseClock::time_point CoarseClock::now() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return time_point(fromTimespec(ts));
}

CoarseClock::duration CoarseClock::resolution() noexcept {
  timespec ts;
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) != 0) {
    return std::chrono::milliseconds(4);  // The coarsest tick Linux uses (HZ=250).
  }
  return fromTimespec(ts);
}

#else

CoarseClock::time_point CoarseClock::now() noexcept { return PreciseClock::now(); }
CoarseClock::duration CoarseClock::resolution() noexcept { return std::chrono::nanoseconds(1); }

#endif

}  // namespace syncwrite::clock
