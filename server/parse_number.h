// parseNumber: an integer read from text, with a range check; parseCounter:
// a counter's value read as kv_engine reads it.
//
// The number parsers besides absl::SimpleAtoi/SimpleAtod, which callers use
// directly when any value of a 32- or 64-bit type will do. parseNumber adds
// what SimpleAtoi lacks: 8- and 16-bit types and a [min, max] range.
#pragma once

#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

#include <absl/strings/numbers.h>

namespace syncwrite::server {

// The integer `text` spells, if it is one within [min, max]; nullopt for
// anything else (empty, not a number, out of range). The syntax is
// absl::SimpleAtoi's: decimal digits after an optional sign, with surrounding
// ASCII whitespace ignored (so "42\n" read from a file is 42). Costs one
// SimpleAtoi.
template <typename Int>
requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>) std::optional<Int> parseNumber(
    std::string_view text, Int min = std::numeric_limits<Int>::min(),
    Int max = std::numeric_limits<Int>::max()) {
  using Wide = std::conditional_t<std::is_signed_v<Int>, int64_t, uint64_t>;
  Wide value = 0;
  if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &value) ||
      value < static_cast<Wide>(min) || value > static_cast<Wide>(max)) {
    return std::nullopt;
  }
  return static_cast<Int>(value);
}

// The value of an INCREMENT/DECREMENT's item, read with the rules of
// kv_engine's safe_strtoull (utilities/util.cc): leading whitespace is
// skipped, then one optional '+', then decimal digits up to 2^64 - 1; the
// digits must end the text or be followed by whitespace, after which
// anything is ignored ("12 apples" is 12). No '-', no other sign, no empty
// number, no overflow. Whitespace is C's isspace: space, \t, \n, \v, \f, \r.
inline std::optional<uint64_t> parseCounter(std::string_view text) noexcept {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  const char* first = text.data();
  const char* const end = text.data() + text.size();
  while (first != end && space(*first)) ++first;
  if (first != end && *first == '+') ++first;
  uint64_t value = 0;
  const auto [stop, error] = std::from_chars(first, end, value);
  if (error != std::errc() || (stop != end && !space(*stop))) return std::nullopt;
  return value;
}

}  // namespace syncwrite::server
