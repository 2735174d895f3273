// The durability layer's reading of its enum-valued configuration keys.
//
// config/keys.h (generated from config/schema.json) gives each enum key an
// enum class with one enumerator per allowed value; these functions map them
// to the domain's types. The switches are exhaustive with no default: a value
// added to the schema without a case here is a -Wswitch warning (an error in
// CI), and DurabilityConfigValues tests convert every value the schema allows.
// An enumerator no case handles (a value forced out of range) is a programming
// error: the call prints the key and the value and aborts, never guesses.
#pragma once

#include <absl/status/status.h>

#include "clock/clock_ref.h"
#include "config/keys.h"
#include "durability/level.h"
#include "durability/timeout_mode.h"

namespace syncwrite::durability {

// durability_timeout_mode.
TimeoutMode timeoutModeOf(config::DurabilityTimeoutMode value) noexcept;

// durability_min_level.
Level minLevelOf(config::DurabilityMinLevel value) noexcept;

// OK, or InvalidArgument naming durability_min_level when `level` needs
// persistence and the bucket has no disk (`persistent` false: bucket_type
// ephemeral), whose every plain write it would otherwise turn into a refused
// SyncWrite.
absl::Status checkMinLevel(Level level, bool persistent);

// durability_visitor_clock: the clock the polling visitor reads between vbuckets.
clock::ClockRef visitorClockOf(config::DurabilityVisitorClock value) noexcept;

}  // namespace syncwrite::durability
