#include "server/json_value.h"

#include <cstddef>
#include <string_view>

#include <simdjson.h>

namespace syncwrite::server {

namespace {
constexpr size_t kKeptParserBytes = size_t{1} << 20;

// Whether `value` may be JSON by its first byte after whitespace: RFC 8259's
// grammar lets a JSON text begin only with a value's first character.
// Most values that are not JSON (binary, plain text) end here, before
// simdjson is called.
bool mayBeJson(std::string_view value) noexcept {
  const size_t first = value.find_first_not_of(" \t\n\r");
  if (first == std::string_view::npos) return false;
  constexpr std::string_view kFirstBytes = "{[\"-tfn0123456789";
  return kFirstBytes.find(value[first]) != std::string_view::npos;
}
}  // namespace

bool isJson(std::string_view value) {
  if (!mayBeJson(value)) return false;
  thread_local simdjson::dom::parser parser;
  // realloc_if_needed: the value sits in a connection's buffer, which gives
  // no guarantee of simdjson's padding after it, so the parser copies it.
  const bool json = !parser.parse(value.data(), value.size(), /*realloc_if_needed=*/true).error();
  if (value.size() > kKeptParserBytes) parser = simdjson::dom::parser();
  return json;
}

}  // namespace syncwrite::server
