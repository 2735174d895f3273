// Schema: what configuration keys exist and what each accepts.
//
// The schema is data (config/schema.json, compiled in); this file turns it into
// KeySpecs that can check a value and explain a refusal. Every message names
// the key, the value given and what was expected, so that it can be shown to
// an operator as it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <nlohmann/json.hpp>

namespace syncwrite::config {

enum class ValueType { kBool, kUnsigned, kDurationMs, kString, kEnum };
enum class Scope { kServer, kBucket };

const char* toString(ValueType t) noexcept;
const char* toString(Scope s) noexcept;

// One configuration key. Values are held as JSON: bool, unsigned integer
// (also for durations, in milliseconds), or string (also for enums).
// (clang-tidy 14 reports its implicit members as throwing; they do not.)
struct KeySpec {  // NOLINT(bugprone-exception-escape)
  std::string name;
  ValueType type = ValueType::kString;
  nlohmann::json default_value;
  std::optional<uint64_t> min;      // kUnsigned, kDurationMs
  std::optional<uint64_t> max;      // kUnsigned, kDurationMs
  std::vector<std::string> values;  // kEnum: the allowed values, in schema order
  bool dynamic = false;             // may change on a live server
  Scope scope = Scope::kBucket;
  std::string description;

  // OK when `v` has this key's type and passes its validator; otherwise
  // InvalidArgument naming the key, the value and what was expected.
  absl::Status validate(const nlohmann::json& v) const;

  // As validate(), returning the value in the form it is stored: integers as
  // unsigned (a non-negative signed JSON integer such as json(10) is accepted).
  absl::StatusOr<nlohmann::json> canonical(const nlohmann::json& v) const;

  // Parses a value written as text (as it arrives in a SET_PARAM request):
  // "true"/"false", a decimal integer, or the string itself. The result is
  // validated. Errors as validate().
  absl::StatusOr<nlohmann::json> parseText(std::string_view text) const;

  // What this key accepts, in words: "an unsigned integer in 1..1024".
  std::string expected() const;
};

// An immutable, ordered set of KeySpecs. Thread-safe (read-only after parse()).
class Schema {
 public:
  // The schema compiled from config/schema.json. Parsed once, on first use;
  // a malformed embedded schema is a build defect and aborts with its error.
  static const Schema& builtin();

  // Parses a schema document. Refuses (InvalidArgument, with the reason) a
  // document that is not JSON, a key without name/type/default/dynamic/scope/
  // description, an unknown type or scope, a duplicate key, or a default its
  // own validator refuses.
  static absl::StatusOr<Schema> parse(std::string_view json_text);

  // The key named `name`, or nullptr.
  const KeySpec* find(std::string_view name) const noexcept;

  // Every key, in schema order.
  const std::vector<KeySpec>& keys() const noexcept { return keys_; }

 private:
  std::vector<KeySpec> keys_;
};

}  // namespace syncwrite::config
