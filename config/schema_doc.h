// Renders the schema as docs/configuration.md. The document is generated, never
// edited by hand: `./dev docs` rewrites it, and a test fails when it is stale.
#pragma once

#include <string>

#include "config/schema.h"

namespace syncwrite::config {

// The full Markdown text of docs/configuration.md for `schema`.
std::string renderConfigurationMarkdown(const Schema& schema);

}  // namespace syncwrite::config
