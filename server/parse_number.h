// parseNumber: an integer read from text, with a range check.
//
// The one number parser besides absl::SimpleAtoi/SimpleAtod, which callers use
// directly when any value of a 32- or 64-bit type will do. This adds what
// SimpleAtoi lacks: 8- and 16-bit types and a [min, max] range.
#pragma once

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

}  // namespace syncwrite::server
