// JSON values on nlohmann_json, with kv_engine's depth limit enforced while
// parsing (a hostile document nested a million levels deep is refused at
// level kMaxDepth + 1, before it costs memory or stack).
//
// Normalisation (where this library differs from kv_engine): kv_engine's
// subjson splices new bytes into the document and keeps every untouched byte.
// This library parses into nlohmann::ordered_json and writes the result with
// dump(), so a mutated body or xattr keeps its members' order but loses
// insignificant whitespace, writes numbers in nlohmann's form (1e2 -> 100.0,
// integers beyond 64 bits lose precision), writes strings with only the
// escapes JSON requires (\u00e9 -> é), and keeps the last of duplicate keys.
// A body or xattr no operation modified is kept byte-for-byte; a lookup
// returns the dump() of the value it found, except a whole body or a whole
// xattr, which come back as stored. tests/subdoc_json_test.cc pins this.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace syncwrite::subdoc {

using Json = nlohmann::ordered_json;

enum class ParseResult { kOk, kNotJson, kTooDeep };

// Parses `text` as one JSON value into `out`. The value's own root is level
// `baseLevel`; a value deeper than kMaxDepth is kTooDeep.
// Cost: O(text) time and memory; never throws.
ParseResult parseJson(std::string_view text, Json& out, std::size_t baseLevel = 1);

// dump() that never throws (invalid UTF-8 in a string is replaced, as the
// input was checked by the parser anyway).
std::string dumpJson(const Json& value);

}  // namespace syncwrite::subdoc
