#include "clock/syscall_clock.h"

#include "clock/precise_clock.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

namespace syncwrite::clock {

SyscallClock::time_point SyscallClock::now() noexcept {
#if defined(__linux__) && defined(SYS_clock_gettime)
  timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
#else
  return PreciseClock::now();
#endif
}

}  // namespace syncwrite::clock
