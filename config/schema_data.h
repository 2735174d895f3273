// The text of config/schema.json, compiled into the library so that a binary
// never depends on finding the source tree at run time.
#pragma once

#include <string_view>

namespace syncwrite::config {

// The schema document, exactly as in config/schema.json when the build was configured.
std::string_view embeddedSchemaJson() noexcept;

}  // namespace syncwrite::config
