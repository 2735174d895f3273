// Fuzz target: config::Configuration's loading from JSON text and its runtime
// set from text (SET_PARAM's form), in both scopes.
//
// Input: byte 0 bit 0 picks the scope (server or bucket), bit 1 what the rest
// is: a configuration document for loadString(), or "key NUL value" for
// setFromText().
//
// Properties:
//  - all or nothing: a refused document or value leaves every key as it was;
//  - a configuration accepted once is accepted again once printed: the text
//    of toJson() loads into a fresh Configuration, which prints the same;
//  - a value accepted by setFromText() is accepted again as the text it
//    reads back as, and reads back the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/configuration.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace config = syncwrite::config;

// How SET_PARAM would spell a value: a string as itself, the rest as JSON.
std::string asText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

void checkReprinted(const config::Configuration& loaded) {
  const nlohmann::json printed = loaded.toJson();
  config::Configuration again(loaded.scope());
  const absl::Status status = again.loadString(printed.dump());
  FUZZ_CHECK(status.ok(), std::string(status.message()));
  FUZZ_CHECK(again.toJson() == printed, "the reloaded configuration prints otherwise");
}

void fuzzLoad(config::Scope scope, std::string_view text) {
  config::Configuration c(scope);
  const nlohmann::json defaults = c.toJson();
  if (!c.loadString(text).ok()) {
    FUZZ_CHECK(c.toJson() == defaults, "a refused document changed a key");
    return;
  }
  checkReprinted(c);
}

void fuzzSet(config::Scope scope, std::string_view input) {
  const size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return;
  const std::string_view key = input.substr(0, nul);
  const std::string_view text = input.substr(nul + 1);
  config::Configuration c(scope);
  const nlohmann::json before = c.toJson();
  if (!c.setFromText(key, text).ok()) {
    FUZZ_CHECK(c.toJson() == before, "a refused set changed a key");
    return;
  }
  const nlohmann::json after = c.toJson();
  const auto it = after.find(std::string(key));
  FUZZ_CHECK(it != after.end(), "a set key that toJson() does not list");
  config::Configuration again(scope);
  const absl::Status status = again.setFromText(key, asText(*it));
  FUZZ_CHECK(status.ok(), std::string(status.message()));
  FUZZ_CHECK(again.toJson() == after, "the value read back sets something else");
  checkReprinted(c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const config::Scope scope = (data[0] & 1) != 0 ? config::Scope::kBucket : config::Scope::kServer;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 2) != 0) {
    fuzzSet(scope, rest);
  } else {
    fuzzLoad(scope, rest);
  }
  return 0;
}
