// base::BorrowedView refuses a temporary std::string at compile time, and
// durability::WriteRequest's key and value with it (the mistake it exists
// for: a request viewing a string gone by the time write() reads it).
#include <string>
#include <string_view>
#include <type_traits>

#include <gtest/gtest.h>

#include "base/borrowed_view.h"
#include "durability/sync_write.h"

namespace syncwrite::base {
namespace {

static_assert(!std::is_constructible_v<BorrowedView, std::string&&>);
static_assert(!std::is_convertible_v<std::string, BorrowedView>);
static_assert(!std::is_assignable_v<BorrowedView&, std::string&&>);
static_assert(std::is_convertible_v<const std::string&, BorrowedView>);
static_assert(std::is_convertible_v<std::string&, BorrowedView>);
static_assert(std::is_convertible_v<std::string_view, BorrowedView>);
static_assert(std::is_convertible_v<const char*, BorrowedView>);
static_assert(std::is_convertible_v<BorrowedView, std::string_view>);
static_assert(!std::is_assignable_v<decltype(durability::WriteRequest::key)&, std::string&&>);
static_assert(!std::is_assignable_v<decltype(durability::WriteRequest::value)&, std::string&&>);

TEST(BorrowedView, ViewsTheBytesItWasGiven) {
  const std::string named = "key-1";
  const BorrowedView from_string = named;
  EXPECT_EQ(from_string.data(), named.data());
  EXPECT_EQ(from_string, "key-1");
  const BorrowedView from_literal = "value";
  EXPECT_EQ(from_literal.size(), 5u);
  const BorrowedView from_view = std::string_view(named).substr(4);
  EXPECT_EQ(from_view, "1");
  EXPECT_TRUE(BorrowedView().empty());
}

}  // namespace
}  // namespace syncwrite::base
