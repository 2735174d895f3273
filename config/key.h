// Key<T>: a configuration key known at compile time, with the C++ type its
// value is read as.
//
// Every key is declared once, in config/schema.json; the build generates
// config/keys.h from it (syncwrite-config-keys), with one constant per key:
//
//   inline constexpr Key<std::chrono::milliseconds> kDurabilityDefaultTimeout{
//       "durability_default_timeout", Scope::kBucket};
//
// and code reads `configuration.get(keys::kDurabilityDefaultTimeout)`. A
// misspelt key does not compile, and the value comes back as the schema's type:
//
//   schema type    C++ type
//   bool           bool
//   unsigned       uint64_t
//   duration_ms    std::chrono::milliseconds
//   string         std::string
//   enum           an enum class generated beside the key, one enumerator per
//                  allowed value in schema order ("event-driven" → kEventDriven)
//
// KeyValue<T> says how a T is held in a Configuration (as JSON) and back; a Key
// of any other type does not compile. Layers above config turn a generated
// enum into their own type with an exhaustive switch (e.g.
// durability/config_values.h), so a value added to the schema without a case
// there is a -Wswitch warning, an error in CI.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "config/schema.h"

namespace syncwrite::config {

// What the schema declares of a key, as config/keys.h lists it (keys::kAll).
struct KeyDeclaration {
  std::string_view name;
  ValueType type;
  Scope scope;
};

// True when config/schema.json declares `name` with this type and scope.
// Defined by config/keys.h.
consteval bool isDeclaredKey(std::string_view name, ValueType type, Scope scope);

template <typename T>
struct KeyValue;  // below

template <typename T>
class Key {
 public:
  // Only at compile time, and only for a key the schema declares with this
  // type and scope: a Key written by hand with a misspelt name does not
  // compile either.
  consteval Key(std::string_view name, Scope scope) : name_(name), scope_(scope) {
    if (!isDeclaredKey(name, KeyValue<T>::kType, scope)) {
      throw "not a key of config/schema.json (or not of this type and scope)";
    }
  }

  constexpr std::string_view name() const noexcept { return name_; }
  constexpr Scope scope() const noexcept { return scope_; }

 private:
  std::string_view name_;
  Scope scope_;
};

// The allowed values of a generated enum, in schema order: the enumerator
// with value i is spelt EnumSpellings<E>::kValues[i]. config/keys.h
// specialises it for each enum it generates.
template <typename E>
struct EnumSpellings;

template <typename E>
concept GeneratedEnum = std::is_enum_v<E> && requires {
  { EnumSpellings<E>::kValues.size() } -> std::convertible_to<size_t>;
};

// The schema spelling of `value` ("event-driven").
template <GeneratedEnum E>
constexpr std::string_view spellingOf(E value) noexcept {
  const auto& all = EnumSpellings<E>::kValues;
  const auto i = static_cast<size_t>(value);
  return i < all.size() ? all[i] : std::string_view("?");
}

// The enumerator spelt `spelling`, or nullopt.
template <GeneratedEnum E>
constexpr std::optional<E> enumFromSpelling(std::string_view spelling) noexcept {
  const auto& all = EnumSpellings<E>::kValues;
  const auto it = std::find(all.begin(), all.end(), spelling);
  if (it == all.end()) return std::nullopt;
  return static_cast<E>(it - all.begin());
}

// Undefined for any other type: no Key of an unsupported type.

template <>
struct KeyValue<bool> {
  static constexpr ValueType kType = ValueType::kBool;
  static bool fromJson(const nlohmann::json& v, std::string_view) { return v.get<bool>(); }
  static nlohmann::json toJson(bool v) { return v; }
};

template <>
struct KeyValue<uint64_t> {
  static constexpr ValueType kType = ValueType::kUnsigned;
  static uint64_t fromJson(const nlohmann::json& v, std::string_view) { return v.get<uint64_t>(); }
  static nlohmann::json toJson(uint64_t v) { return v; }
};

template <>
struct KeyValue<std::chrono::milliseconds> {
  static constexpr ValueType kType = ValueType::kDurationMs;
  static std::chrono::milliseconds fromJson(const nlohmann::json& v, std::string_view) {
    return std::chrono::milliseconds(v.get<uint64_t>());
  }
  // A negative duration stays negative, for the schema to refuse by name.
  static nlohmann::json toJson(std::chrono::milliseconds v) { return v.count(); }
};

template <>
struct KeyValue<std::string> {
  static constexpr ValueType kType = ValueType::kString;
  static std::string fromJson(const nlohmann::json& v, std::string_view) {
    return v.get<std::string>();
  }
  static nlohmann::json toJson(const std::string& v) { return v; }
};

template <GeneratedEnum E>
struct KeyValue<E> {
  static constexpr ValueType kType = ValueType::kEnum;
  // The stored value was checked against the schema E was generated from, so
  // it is one of E's spellings; if not, the build is inconsistent, and this
  // throws std::logic_error naming the key and the value rather than guess.
  static E fromJson(const nlohmann::json& v, std::string_view key) {
    const std::string& spelling = v.get_ref<const std::string&>();
    if (std::optional<E> e = enumFromSpelling<E>(spelling)) return *e;
    throw std::logic_error(std::string(key) + ": \"" + spelling +
                           "\" is not a value of the enum generated from the schema "
                           "(config/keys.h is out of date with the schema in use)");
  }
  static nlohmann::json toJson(E v) { return std::string(spellingOf(v)); }
};

}  // namespace syncwrite::config
