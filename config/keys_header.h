// Renders config/keys.h: one typed Key constant per schema key (and an enum
// class per enum key), so that code names keys the compiler checks. The
// header is generated at build time by syncwrite-config-keys from
// config/schema.json and lives only in the build tree; config/key.h explains
// how the constants are used.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <absl/status/statusor.h>

#include "config/schema.h"

namespace syncwrite::config {

// The C++ text of config/keys.h for `schema`. InvalidArgument, naming the key,
// when a key or enum value has no C++ name (it must be letters and digits
// separated by '_' or '-', starting with a letter) or two map to the same one.
absl::StatusOr<std::string> renderKeysHeader(const Schema& schema);

// "durability_timeout_mode" → "DurabilityTimeoutMode", "event-driven" →
// "EventDriven"; nullopt for a spelling renderKeysHeader refuses.
std::optional<std::string> cppNameOf(std::string_view spelling);

}  // namespace syncwrite::config
