#include "config/schema.h"

#include <cstdio>
#include <cstdlib>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "config/schema_data.h"

namespace syncwrite::config {

const char* toString(ValueType t) noexcept {
  switch (t) {
    case ValueType::kBool:
      return "bool";
    case ValueType::kUnsigned:
      return "unsigned";
    case ValueType::kDurationMs:
      return "duration_ms";
    case ValueType::kString:
      return "string";
    case ValueType::kEnum:
      return "enum";
  }
  return "?";
}

const char* toString(Scope s) noexcept { return s == Scope::kServer ? "server" : "bucket"; }

namespace {

// A value as an operator would write it: strings quoted, numbers bare. Bytes
// that are not UTF-8 (SET_PARAM's text may hold any) are shown as U+FFFD:
// a plain dump() throws on them (found by tests/fuzz/config_fuzz.cc).
std::string shown(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// True when `s` is valid UTF-8, as JSON text must be (RFC 8259 §8.1).
bool isUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
  return true;
}

std::optional<ValueType> typeFromString(std::string_view s) {
  for (ValueType t : {ValueType::kBool, ValueType::kUnsigned, ValueType::kDurationMs,
                      ValueType::kString, ValueType::kEnum}) {
    if (std::string_view(toString(t)) == s) return t;
  }
  return std::nullopt;
}

}  // namespace

std::string KeySpec::expected() const {
  switch (type) {
    case ValueType::kBool:
      return "true or false";
    case ValueType::kUnsigned:
    case ValueType::kDurationMs: {
      std::string unit = type == ValueType::kDurationMs ? " (milliseconds)" : "";
      if (min && max) {
        return absl::StrCat("an unsigned integer in ", *min, "..", *max, unit);
      }
      if (min) return absl::StrCat("an unsigned integer >= ", *min, unit);
      if (max) return absl::StrCat("an unsigned integer <= ", *max, unit);
      return absl::StrCat("an unsigned integer", unit);
    }
    case ValueType::kString:
      return "a string";
    case ValueType::kEnum:
      return absl::StrCat("one of ", absl::StrJoin(values, ", "));
  }
  return "?";
}

absl::Status KeySpec::validate(const nlohmann::json& v) const { return canonical(v).status(); }

absl::StatusOr<nlohmann::json> KeySpec::canonical(const nlohmann::json& v) const {
  auto refuse = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", shown(v), " is not valid, expected ", expected()));
  };
  switch (type) {
    case ValueType::kBool:
      if (v.is_boolean()) return v;
      return refuse();
    case ValueType::kUnsigned:
    case ValueType::kDurationMs: {
      const bool non_negative =
          v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      if (!non_negative) return refuse();
      const uint64_t n = v.get<uint64_t>();
      if ((min && n < *min) || (max && n > *max)) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", n, " is out of range, expected ", expected()));
      }
      return nlohmann::json(n);
    }
    case ValueType::kString:
      if (!v.is_string()) return refuse();
      // Not UTF-8, the value could not be printed back as JSON (toJson()).
      if (!isUtf8(v.get_ref<const std::string&>())) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", shown(v), " is not valid UTF-8"));
      }
      return v;
    case ValueType::kEnum:
      if (!v.is_string()) return refuse();
      for (const auto& allowed : values) {
        if (v.get_ref<const std::string&>() == allowed) return v;
      }
      return refuse();
  }
  return refuse();
}

absl::StatusOr<nlohmann::json> KeySpec::parseText(std::string_view text) const {
  nlohmann::json v;
  switch (type) {
    case ValueType::kBool:
      if (text == "true") {
        v = true;
      } else if (text == "false") {
        v = false;
      } else {
        v = std::string(text);  // validate() refuses it with the usual message.
      }
      break;
    case ValueType::kUnsigned:
    case ValueType::kDurationMs: {
      uint64_t n = 0;
      if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &n)) {
        v = std::string(text);
      } else {
        v = n;
      }
      break;
    }
    case ValueType::kString:
    case ValueType::kEnum:
      v = std::string(text);
      break;
  }
  return canonical(v);
}

absl::StatusOr<Schema> Schema::parse(std::string_view json_text) {
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("schema: not valid JSON");
  if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array()) {
    return absl::InvalidArgumentError("schema: expected an object with a \"keys\" array");
  }
  Schema schema;
  for (const auto& k : doc["keys"]) {
    const std::string where =
        k.is_object() && k.contains("name") && k["name"].is_string()
            ? absl::StrCat("schema key \"", k["name"].get<std::string>(), "\"")
            : absl::StrCat("schema key #", schema.keys_.size());
    for (const char* field : {"name", "type", "default", "dynamic", "scope", "description"}) {
      if (!k.is_object() || !k.contains(field)) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": missing \"", field, "\""));
      }
    }
    KeySpec spec;
    if (!k["name"].is_string() || !k["type"].is_string() || !k["dynamic"].is_boolean() ||
        !k["scope"].is_string() || !k["description"].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": a field has the wrong JSON type"));
    }
    spec.name = k["name"].get<std::string>();
    auto type = typeFromString(k["type"].get<std::string>());
    if (!type) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown type \"", k["type"].get<std::string>(), "\""));
    }
    spec.type = *type;
    const std::string scope = k["scope"].get<std::string>();
    if (scope != "server" && scope != "bucket") {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown scope \"", scope, "\""));
    }
    spec.scope = scope == "server" ? Scope::kServer : Scope::kBucket;
    spec.dynamic = k["dynamic"].get<bool>();
    spec.description = k["description"].get<std::string>();
    if (k.contains("min")) {
      if (!k["min"].is_number_unsigned()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": \"min\" must be unsigned"));
      }
      spec.min = k["min"].get<uint64_t>();
    }
    if (k.contains("max")) {
      if (!k["max"].is_number_unsigned()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": \"max\" must be unsigned"));
      }
      spec.max = k["max"].get<uint64_t>();
    }
    if (spec.type == ValueType::kEnum) {
      if (!k.contains("values") || !k["values"].is_array() || k["values"].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": an enum needs \"values\""));
      }
      for (const auto& v : k["values"]) {
        if (!v.is_string()) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": enum values are strings"));
        }
        spec.values.push_back(v.get<std::string>());
      }
    }
    absl::StatusOr<nlohmann::json> default_value = spec.canonical(k["default"]);
    if (!default_value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": bad default: ", default_value.status().message()));
    }
    spec.default_value = *std::move(default_value);
    if (schema.find(spec.name) != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": defined twice"));
    }
    schema.keys_.push_back(std::move(spec));
  }
  return schema;
}

const KeySpec* Schema::find(std::string_view name) const noexcept {
  for (const auto& k : keys_) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const Schema& Schema::builtin() {
  static const Schema schema = [] {
    absl::StatusOr<Schema> parsed = parse(embeddedSchemaJson());
    if (!parsed.ok()) {
      std::fprintf(stderr, "syncwrite: embedded config/schema.json is invalid: %s\n",
                   std::string(parsed.status().message()).c_str());
      std::abort();
    }
    return *std::move(parsed);
  }();
  return schema;
}

}  // namespace syncwrite::config
