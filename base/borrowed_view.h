// BorrowedView: a std::string_view that cannot be made from a temporary
// std::string.
//
// A request that only views its bytes (durability::WriteRequest's key and
// value, copied once into the item they end up in) must not be handed a
// std::string that dies at the end of the statement building the request:
// `WriteRequest r{op, "key" + std::to_string(i), ...}` would leave r.key
// dangling, and GCC says nothing. Here that line does not compile (the
// std::string&& constructor is deleted); a named string, a literal, a
// std::string_view or another BorrowedView are accepted. It is a
// std::string_view otherwise (public base): everything taking one takes it.
//
// It does not make a view safe, only that one mistake loud: a std::string_view
// of a temporary, made explicitly, still dangles.
#pragma once

#include <string>
#include <string_view>

namespace syncwrite::base {

class BorrowedView : public std::string_view {
 public:
  constexpr BorrowedView() noexcept = default;
  constexpr BorrowedView(const char* s) noexcept : std::string_view(s) {}  // NOLINT: implicit
  constexpr BorrowedView(const char* s, size_type n) noexcept : std::string_view(s, n) {}
  constexpr BorrowedView(std::string_view v) noexcept : std::string_view(v) {}  // NOLINT: implicit
  BorrowedView(const std::string& s) noexcept : std::string_view(s) {}          // NOLINT: implicit
  // A temporary string would be gone by the time the view is read.
  BorrowedView(std::string&&) = delete;
};

}  // namespace syncwrite::base
