// subdoc/path.h and subdoc/status.h: kv_engine's path syntax and limits, and
// the status numbers a server answers unchanged.
#include <string>

#include <gtest/gtest.h>

#include "subdoc/path.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace syncwrite::subdoc {
namespace path_test {

Path parseOk(std::string_view text) {
  Path path;
  EXPECT_EQ(parsePath(text, path), Status::Success) << text;
  return path;
}

Status parseStatus(std::string_view text) {
  Path path;
  return parsePath(text, path);
}

TEST(SubdocStatus, ValuesAreKvEngineMcbpStatuses) {
  EXPECT_EQ(static_cast<int>(Status::SubdocPathEnoent), 0xc0);
  EXPECT_EQ(static_cast<int>(Status::SubdocPathMismatch), 0xc1);
  EXPECT_EQ(static_cast<int>(Status::SubdocPathEinval), 0xc2);
  EXPECT_EQ(static_cast<int>(Status::SubdocPathE2big), 0xc3);
  EXPECT_EQ(static_cast<int>(Status::SubdocDocE2deep), 0xc4);
  EXPECT_EQ(static_cast<int>(Status::SubdocValueCantinsert), 0xc5);
  EXPECT_EQ(static_cast<int>(Status::SubdocDocNotJson), 0xc6);
  EXPECT_EQ(static_cast<int>(Status::SubdocNumErange), 0xc7);
  EXPECT_EQ(static_cast<int>(Status::SubdocDeltaEinval), 0xc8);
  EXPECT_EQ(static_cast<int>(Status::SubdocPathEexists), 0xc9);
  EXPECT_EQ(static_cast<int>(Status::SubdocValueEtoodeep), 0xca);
  EXPECT_EQ(static_cast<int>(Status::SubdocInvalidCombo), 0xcb);
  EXPECT_EQ(static_cast<int>(Status::SubdocMultiPathFailure), 0xcc);
  EXPECT_EQ(static_cast<int>(Status::SubdocSuccessDeleted), 0xcd);
  EXPECT_EQ(static_cast<int>(Status::SubdocXattrInvalidFlagCombo), 0xce);
  EXPECT_EQ(static_cast<int>(Status::SubdocXattrInvalidKeyCombo), 0xcf);
  EXPECT_EQ(static_cast<int>(Status::SubdocXattrUnknownMacro), 0xd0);
  EXPECT_EQ(static_cast<int>(Status::SubdocXattrUnknownVattr), 0xd1);
  EXPECT_EQ(static_cast<int>(Status::SubdocXattrCantModifyVattr), 0xd2);
  EXPECT_EQ(static_cast<int>(Status::SubdocMultiPathFailureDeleted), 0xd3);
  EXPECT_EQ(static_cast<int>(Status::SubdocInvalidXattrOrder), 0xd4);
  EXPECT_EQ(static_cast<int>(Status::SubdocXattrUnknownVattrMacro), 0xd5);
  EXPECT_EQ(static_cast<int>(Status::SubdocCanOnlyReviveDeletedDocuments), 0xd6);
  EXPECT_EQ(static_cast<int>(Status::XattrEinval), 0x87);
  EXPECT_EQ(toString(Status::SubdocPathEnoent), "SubdocPathEnoent");
  EXPECT_EQ(toString(static_cast<Status>(0x99)), "Unknown");
}

TEST(SubdocPath, EmptyIsTheRoot) { EXPECT_TRUE(parseOk("").empty()); }

TEST(SubdocPath, NestedMembersAndIndexes) {
  const Path path = parseOk("a.b[0][-1].c");
  ASSERT_EQ(path.size(), 5u);
  EXPECT_EQ(path[0].key(), "a");
  EXPECT_EQ(path[1].key(), "b");
  EXPECT_TRUE(path[2].isIndex());
  EXPECT_EQ(path[2].index(), 0);
  EXPECT_EQ(path[3].index(), -1);
  EXPECT_EQ(path[4].key(), "c");
}

TEST(SubdocPath, LeadingIndexAddressesARootArray) {
  const Path path = parseOk("[2].x");
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].index(), 2);
  EXPECT_EQ(path[1].key(), "x");
}

TEST(SubdocPath, BackticksEscapeMetacharacters) {
  Path path = parseOk("`dot.ted.field`.subfield");
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].key(), "dot.ted.field");
  path = parseOk("`back``tick``field`");
  ASSERT_EQ(path.size(), 1u);
  EXPECT_EQ(path[0].key(), "back`tick`field");
  path = parseOk("`a[0]`");
  EXPECT_EQ(path[0].key(), "a[0]");
}

TEST(SubdocPath, JsonEscapesAreUnescaped) {
  const Path path = parseOk(R"(field.with.\"quotes\")");
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[2].key(), "\"quotes\"");
  EXPECT_EQ(parseOk(R"(a\\b)")[0].key(), "a\\b");
}

TEST(SubdocPath, SyntaxErrorsArePathEinval) {
  for (const char* bad :
       {"a..b", ".a", "a.", "a[", "a[x]", "a[-2]", "a[1.5]", "a]", "a[0]b", "`open", R"(a"b)",
        R"(a\u0041)", R"(a\q)", "a\x01", "[]", "a[99999999999999999999]", "``"}) {
    EXPECT_EQ(parseStatus(bad), Status::SubdocPathEinval) << bad;
  }
}

TEST(SubdocPath, ThirtyOneComponentsIsTheLimit) {
  // subjson counts the root among its 32 components.
  std::string path = "c";
  for (std::size_t i = 1; i < kMaxPathComponents; ++i) {
    path += ".c";
  }
  EXPECT_EQ(parseOk(path).size(), kMaxPathComponents);
  EXPECT_EQ(parseStatus(path + ".c"), Status::SubdocPathE2big);
  std::string indexes;
  for (std::size_t i = 0; i <= kMaxPathComponents; ++i) {
    indexes += "[0]";
  }
  EXPECT_EQ(parseStatus(indexes), Status::SubdocPathE2big);
}

TEST(SubdocPath, LongerThan1024BytesIsE2big) {
  EXPECT_EQ(parseStatus(std::string(1024, 'a')), Status::Success);
  EXPECT_EQ(parseStatus(std::string(1025, 'a')), Status::SubdocPathE2big);
}

TEST(SubdocPath, XattrKeyEndsAtDotOrBracket) {
  auto parts = splitXattrPath("_sync.a[1]");
  EXPECT_EQ(parts.key, "_sync");
  EXPECT_EQ(parts.rest, ".a[1]");
  parts = splitXattrPath("meta[0]");
  EXPECT_EQ(parts.key, "meta");
  EXPECT_EQ(parts.rest, "[0]");
  parts = splitXattrPath("txn");
  EXPECT_EQ(parts.key, "txn");
  EXPECT_TRUE(parts.rest.empty());
}

}  // namespace path_test
}  // namespace syncwrite::subdoc
