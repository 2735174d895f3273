#include "server/busy_yield.h"

#include <sched.h>
#include <sys/resource.h>

#include <utility>

namespace syncwrite::server {

BusyYield::Sources BusyYield::kernel() {
  return Sources{
      .voluntary_switches =
          [] {
            rusage usage{};
            // RUSAGE_THREAD cannot fail for the calling thread; on failure
            // the zeroed count reads as "never slept", which only yields.
            getrusage(RUSAGE_THREAD, &usage);
            return static_cast<uint64_t>(usage.ru_nvcsw);
          },
      .now = [] { return std::chrono::steady_clock::now(); },
      .yield = [] { sched_yield(); },
  };
}

BusyYield::BusyYield(std::chrono::nanoseconds slice, Sources sources)
    : slice_(slice), sources_(std::move(sources)) {}

bool BusyYield::atYieldPoint() {
  const auto now = sources_.now();
  // Within the slice: nothing to decide, and no system call.
  if (seen_switches_ && now - slice_start_ < slice_) return false;
  const uint64_t switches = sources_.voluntary_switches();
  if (!seen_switches_ || *seen_switches_ != switches) {
    // First call, or the thread slept at some point of the slice: a new one.
    seen_switches_ = switches;
    slice_start_ = now;
    return false;
  }
  sources_.yield();
  // sched_yield counts as an involuntary switch, if any: the slice restarts
  // here rather than from the count.
  slice_start_ = sources_.now();
  return true;
}

BusyYield& BusyYield::forThisThread() {
  thread_local BusyYield instance;
  return instance;
}

}  // namespace syncwrite::server
