#include "durability/config_values.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <absl/strings/str_cat.h>

#include "clock/coarse_clock.h"
#include "clock/precise_clock.h"
#include "clock/syscall_clock.h"

namespace syncwrite::durability {

namespace {

template <typename E>
[[noreturn]] void unhandled(const config::Key<E>& key, E value) noexcept {
  std::fprintf(stderr,
               "syncwrite: %s has value %d (\"%s\"), which durability/config_values.cc "
               "does not handle\n",
               std::string(key.name()).c_str(), static_cast<int>(value),
               std::string(config::spellingOf(value)).c_str());
  std::abort();
}

}  // namespace

TimeoutMode timeoutModeOf(config::DurabilityTimeoutMode value) noexcept {
  using enum config::DurabilityTimeoutMode;
  switch (value) {
    case kEventDriven:
      return TimeoutMode::kEventDriven;
    case kPolling:
      return TimeoutMode::kPolling;
  }
  unhandled(config::keys::kDurabilityTimeoutMode, value);
}

Level minLevelOf(config::DurabilityMinLevel value) noexcept {
  using enum config::DurabilityMinLevel;
  switch (value) {
    case kNone:
      return Level::kNone;
    case kMajority:
      return Level::kMajority;
    case kMajorityAndPersistOnMaster:
      return Level::kMajorityAndPersistOnMaster;
    case kPersistToMajority:
      return Level::kPersistToMajority;
  }
  unhandled(config::keys::kDurabilityMinLevel, value);
}

absl::Status checkMinLevel(Level level, bool persistent) {
  if (persistent || !needsActivePersistence(level)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("durability_min_level: '", std::string(toString(level)),
                   "' needs persistence, and an ephemeral bucket has no disk (bucket_type)"));
}

clock::ClockRef visitorClockOf(config::DurabilityVisitorClock value) noexcept {
  using enum config::DurabilityVisitorClock;
  switch (value) {
    case kCoarse:
      return clock::ClockRef::of<clock::CoarseClock>();
    case kPrecise:
      return clock::ClockRef::of<clock::PreciseClock>();
    case kSyscall:
      return clock::ClockRef::of<clock::SyscallClock>();
  }
  unhandled(config::keys::kDurabilityVisitorClock, value);
}

}  // namespace syncwrite::durability
