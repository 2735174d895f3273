#include "clock/manual_clock.h"

#include <stdexcept>
#include <string>

namespace syncwrite::clock {

void ManualClock::advance(duration d) {
  if (d < duration::zero()) {
    throw std::invalid_argument("ManualClock::advance: negative step of " +
                                std::to_string(d.count()) + " ns would move time backwards");
  }
  now_.fetch_add(d.count(), std::memory_order_acq_rel);
}

void ManualClock::set(time_point t) {
  rep wanted = t.time_since_epoch().count();
  rep current = now_.load(std::memory_order_acquire);
  do {
    if (wanted < current) {
      throw std::invalid_argument("ManualClock::set: " + std::to_string(wanted) +
                                  " ns is before the current " + std::to_string(current) +
                                  " ns; time never goes backwards");
    }
  } while (!now_.compare_exchange_weak(current, wanted, std::memory_order_acq_rel));
}

}  // namespace syncwrite::clock
