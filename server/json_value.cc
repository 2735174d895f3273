#include "server/json_value.h"

#include <cstddef>

#include <simdjson.h>

namespace syncwrite::server {

namespace {
constexpr size_t kKeptParserBytes = size_t{1} << 20;
}  // namespace

bool isJson(std::string_view value) {
  thread_local simdjson::dom::parser parser;
  // realloc_if_needed: the value sits in a connection's buffer, which gives
  // no guarantee of simdjson's padding after it, so the parser copies it.
  const bool json = !parser.parse(value.data(), value.size(), /*realloc_if_needed=*/true).error();
  if (value.size() > kKeptParserBytes) parser = simdjson::dom::parser();
  return json;
}

}  // namespace syncwrite::server
