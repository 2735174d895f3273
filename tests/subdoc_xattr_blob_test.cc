// subdoc/xattr_blob.h and subdoc/crc32c.h: kv_engine's xattr layout byte for
// byte, round trips, key rules, and malformed blobs answered as errors.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "subdoc/crc32c.h"
#include "subdoc/spec.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {
namespace xattr_blob_test {

using namespace std::string_literals;

TEST(SubdocXattrBlob, EncodesKvEnginesLayout) {
  // docs/Document.md's example: _sync and meta, 0x72 bytes of pairs.
  const Xattrs xattrs{
      {"_sync", R"({"cas":"deadbeefcafefeed"})"},
      {"meta", R"({"author":"Trond Norbye","content-type":"application/octet-stream"})"}};
  const std::string blob = encodeXattrs(xattrs);
  ASSERT_EQ(blob.size(), 4u + 0x72);
  EXPECT_EQ(blob.substr(0, 8), "\x00\x00\x00\x72\x00\x00\x00\x21"s);
  EXPECT_EQ(blob.substr(8, 6), "_sync\0"s);
  // Offset 40: the value's NUL, then meta's pair length 0x49 (the doc's table).
  EXPECT_EQ(blob.substr(40, 8), "\0\0\0\0\x49met"s);
  EXPECT_EQ(blob.back(), '\0');
  Xattrs decoded;
  ASSERT_TRUE(decodeXattrs(blob, decoded));
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].key, "_sync");
  EXPECT_EQ(decoded[1].value, xattrs[1].value);
  EXPECT_EQ(encodeXattrs(decoded), blob);
}

TEST(SubdocXattrBlob, NoXattrsEncodeAsNothing) { EXPECT_TRUE(encodeXattrs({}).empty()); }

TEST(SubdocXattrBlob, SplitAndStripSeparateXattrsFromTheBody) {
  const std::string section = encodeXattrs({{"a", "1"}});
  const std::string value = section + R"({"body":true})";
  SplitValue split;
  ASSERT_TRUE(splitValue(value, datatype::kXattr | datatype::kJson, split));
  EXPECT_EQ(split.xattrs, section);
  EXPECT_EQ(split.body, R"({"body":true})");
  ASSERT_TRUE(splitValue(value, datatype::kJson, split));  // no xattr bit: all body
  EXPECT_TRUE(split.xattrs.empty());
  std::string_view body;
  uint8_t bodyDatatype = 0;
  ASSERT_TRUE(stripXattrs(value, datatype::kXattr | datatype::kJson, body, bodyDatatype));
  EXPECT_EQ(body, R"({"body":true})");
  EXPECT_EQ(bodyDatatype, datatype::kJson);
  EXPECT_FALSE(splitValue("\x00\x00", datatype::kXattr, split));
  EXPECT_FALSE(
      splitValue("\x00\x00\x00\x09"
                 "abc"s,
                 datatype::kXattr, split));
}

TEST(SubdocXattrBlob, MalformedBlobsAreRejected) {
  const std::string good = encodeXattrs({{"key", R"({"a":1})"}, {"_sys", "2"}});
  Xattrs out;
  ASSERT_TRUE(decodeXattrs(good, out));
  // Every truncation, and every single-byte corruption of a length field.
  for (std::size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(decodeXattrs(good.substr(0, n), out)) << n;
  }
  for (std::size_t at : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u}) {
    for (int delta : {1, -1, 0x40}) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] + delta);
      EXPECT_FALSE(decodeXattrs(bad, out)) << at << " " << delta;
    }
  }
  auto pair = [](const std::string& bytes) {
    const auto n = static_cast<uint32_t>(bytes.size());
    std::string len = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                       static_cast<char>(n >> 8), static_cast<char>(n)};
    return len + bytes;
  };
  auto blob = [](const std::string& pairs) {
    const auto n = static_cast<uint32_t>(pairs.size());
    return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                       static_cast<char>(n >> 8), static_cast<char>(n)} +
           pairs;
  };
  EXPECT_TRUE(decodeXattrs(blob(pair("k\0{}\0"s)), out));
  EXPECT_FALSE(decodeXattrs(blob(pair("k\0{\0"s)), out));     // value not JSON
  EXPECT_FALSE(decodeXattrs(blob(pair("k\0{}"s)), out));      // no trailing NUL
  EXPECT_FALSE(decodeXattrs(blob(pair("k{}\0"s)), out));      // no key NUL
  EXPECT_FALSE(decodeXattrs(blob(pair("k\0{}\0\0"s)), out));  // NUL inside the value
  EXPECT_FALSE(decodeXattrs(blob(pair("\0{}\0"s)), out));     // empty key
  EXPECT_FALSE(decodeXattrs(blob(pair("!k\0{}\0"s)), out));   // reserved first char
  EXPECT_FALSE(decodeXattrs(blob(pair("k\0{}\0"s) + pair("k\0[]\0"s)), out));  // duplicate
  EXPECT_FALSE(decodeXattrs(blob(pair("k\0{}\0"s) + "\x00\x00"s), out));       // trailing bytes
  EXPECT_TRUE(decodeXattrs(blob(""), out));  // an empty section is well-formed
  EXPECT_TRUE(out.empty());
}

TEST(SubdocXattrBlob, RandomBytesDecodeAsAnErrorNeverACrash) {
  // Deterministic noise behind a plausible length prefix, for ASan/UBSan.
  std::mt19937 random(55);
  Xattrs out;
  for (int round = 0; round < 2000; ++round) {
    std::string pairs(random() % 64, '\0');
    for (auto& byte : pairs) {
      byte = static_cast<char>(random() % 4 == 0 ? 0 : random());
    }
    if (round % 2 == 0 && pairs.size() >= 4) {  // a plausible first pair length
      const auto n = static_cast<uint32_t>(pairs.size() - 4 - random() % 3);
      pairs[0] = static_cast<char>(n >> 24);
      pairs[1] = static_cast<char>(n >> 16);
      pairs[2] = static_cast<char>(n >> 8);
      pairs[3] = static_cast<char>(n);
    }
    const auto n = static_cast<uint32_t>(pairs.size());
    const std::string blob = std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                                         static_cast<char>(n >> 8), static_cast<char>(n)} +
                             pairs;
    if (decodeXattrs(blob, out)) {
      // Whatever decodes re-encodes identically; no pairs encode as no section.
      EXPECT_EQ(out.empty() ? std::string(4, '\0') : encodeXattrs(out), blob);
    }
  }
}

TEST(SubdocXattrBlob, SystemXattrsAreBoundedToOneMebibyte) {
  const std::string big = "\"" + std::string(kMaxSystemXattrBytes, 'x') + "\"";
  Xattrs out;
  EXPECT_FALSE(decodeXattrs(encodeXattrs({{"_big", big}}), out));
  EXPECT_TRUE(decodeXattrs(encodeXattrs({{"big", big}}), out));  // user xattrs are not
}

TEST(SubdocXattrBlob, KeyRules) {
  for (const char* good : {"a", "_sync", "$document", "txn", "ключ", "abcdefghijklmno", "a]"}) {
    EXPECT_TRUE(isValidXattrKey(good)) << good;
  }
  for (const char* bad :
       {"", "_", "$", "abcdefghijklmnop", "a.b", "a[0]", "!a", "-a", "\ta", "\x80"}) {
    EXPECT_FALSE(isValidXattrKey(bad)) << bad;
  }
  EXPECT_FALSE(isValidXattrKey("a\0b"s));
  EXPECT_TRUE(isSystemXattr("_sync"));
  EXPECT_FALSE(isSystemXattr("sync"));
  EXPECT_TRUE(isVirtualXattr("$document"));
}

TEST(SubdocXattrBlob, SystemXattrsOfKeepsOnlyUnderscoreKeys) {
  const auto system = systemXattrsOf({{"user", "1"}, {"_sys", "2"}});
  ASSERT_EQ(system.size(), 1u);
  EXPECT_EQ(system[0].key, "_sys");
}

TEST(SubdocCrc32c, IsCastagnoli) {
  EXPECT_EQ(crc32c("123456789"), 0xe3069283u);  // the standard check value
  EXPECT_EQ(crc32c(""), 0u);
}

}  // namespace xattr_blob_test
}  // namespace syncwrite::subdoc
