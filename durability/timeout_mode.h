// TimeoutMode: how a bucket finds expired SyncWrites — the values of the
// config key durability_timeout_mode (see bucket_durability.h for both;
// config_values.h reads the key).
#pragma once

#include <cstdint>
#include <string_view>

namespace syncwrite::durability {

enum class TimeoutMode : uint8_t {
  kEventDriven,  // "event-driven": a timer per active vbucket, armed to its oldest deadline
  kPolling,      // "polling": a task per bucket visits every active vbucket each interval
};

// "event-driven" or "polling".
std::string_view toString(TimeoutMode mode) noexcept;

}  // namespace syncwrite::durability
