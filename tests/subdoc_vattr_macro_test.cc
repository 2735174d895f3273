// subdoc/vattr.h and subdoc/macros.h: $document, $vbucket and $XTOC as
// kv_engine writes them, and macro expansion with the placeholders the
// server fills once it knows the new CAS and seqno.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "subdoc/crc32c.h"
#include "subdoc/lookup.h"
#include "subdoc/mutation.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {
namespace vattr_macro_test {

constexpr uint8_t kXattr = path_flag::kXattrPath;
constexpr uint8_t kMacro = path_flag::kXattrPath | path_flag::kExpandMacros;

DocumentMeta sampleMeta() {
  DocumentMeta meta;
  meta.cas = 0x16a2f3d8e4b00000ULL;
  meta.vbucketUuid = 0xabcdef;
  meta.seqno = 42;
  meta.revid = 7;
  meta.exptime = 1700000000;
  meta.flags = 0x2000006;
  meta.datatype = datatype::kJson | datatype::kXattr;
  return meta;
}

std::string lookupOne(const Document& doc, const std::string& path, const LookupContext& context,
                      Status expected = Status::Success) {
  const auto outcome =
      lookup(doc, std::vector<LookupSpec>{{Opcode::Get, kXattr, path}}, 0, context);
  EXPECT_EQ(singleLookupStatus(outcome), expected) << path;
  return outcome.results.empty() ? std::string() : outcome.results[0].value;
}

std::string xattrValue(const MutationOutcome& outcome, const std::string& key) {
  SplitValue split;
  Xattrs xattrs;
  EXPECT_TRUE(splitValue(outcome.value, outcome.datatype, split));
  EXPECT_TRUE(decodeXattrs(split.xattrs, xattrs));
  for (const auto& xattr : xattrs) {
    if (xattr.key == key) {
      return xattr.value;
    }
  }
  return {};
}

TEST(SubdocVattr, DocumentHasKvEnginesFieldsAndFormats) {
  const std::string body = R"({"a":1})";
  const std::string value = encodeXattrs({{"x", "1"}}) + body;
  LookupContext context;
  context.meta = sampleMeta();
  const Document doc{value, context.meta.datatype, false};
  const std::string expected =
      R"({"CAS":"0x16a2f3d8e4b00000","datatype":["json","xattr"],"deleted":false,)"
      R"("exptime":1700000000,"flags":33554438,"last_modified":"1631134127",)"
      R"("revid":"7","seqno":"0x000000000000002a","value_bytes":7,)"
      R"("value_crc32c":")" +
      toHex32(crc32c(body)) + R"(","vbucket_uuid":"0x0000000000abcdef"})";
  EXPECT_EQ(lookupOne(doc, "$document", context), expected);
  EXPECT_EQ(lookupOne(doc, "$document.exptime", context), "1700000000");
  EXPECT_EQ(lookupOne(doc, "$document.CAS", context), "\"0x16a2f3d8e4b00000\"");
  EXPECT_EQ(lookupOne(doc, "$document.nope", context, Status::SubdocPathEnoent), "");
  context.meta.casIsHlc = false;
  context.meta.datatype = 0;
  EXPECT_EQ(lookupOne(doc, "$document.last_modified", context, Status::SubdocPathEnoent), "");
  EXPECT_EQ(lookupOne(doc, "$document.datatype", context), R"(["raw"])");
}

TEST(SubdocVattr, VbucketAndXtoc) {
  const std::string value = encodeXattrs({{"user", "1"}, {"_sys", "2"}}) + "{}";
  const Document doc{value, datatype::kJson | datatype::kXattr, false};
  LookupContext context;
  context.vbucket = {true, 1700000123, false};
  EXPECT_EQ(lookupOne(doc, "$vbucket", context),
            R"({"HLC":{"mode":"logical","now":"1700000123"}})");
  EXPECT_EQ(lookupOne(doc, "$vbucket.HLC.now", context), "\"1700000123\"");
  EXPECT_EQ(lookupOne(doc, "$XTOC", context), R"(["user","_sys"])");
  context.systemXattrRead = false;
  EXPECT_EQ(lookupOne(doc, "$XTOC", context), R"(["user"])");
  context.vbucket.exists = false;
  lookupOne(doc, "$vbucket", context, Status::NotMyVbucket);
  lookupOne(doc, "$nope", context, Status::SubdocXattrUnknownVattr);
}

TEST(SubdocMacros, ExpansionFormatsAreKvEngines) {
  // The CAS is written with its bytes reversed, as kv_engine does.
  EXPECT_EQ(expandMacro(MacroKind::kCas, 0x0102030405060708ULL), "\"0x0807060504030201\"");
  EXPECT_EQ(expandMacro(MacroKind::kSeqno, 0x2a), "\"0x000000000000002a\"");
  EXPECT_EQ(expandMacro(MacroKind::kValueCrc32c, 0xe3069283), "\"0xe3069283\"");
  EXPECT_EQ(validateMacro(R"("${Mutation.CAS}")"), Status::Success);
  EXPECT_EQ(validateMacro(R"("${$document.exptime}")"), Status::Success);
  EXPECT_EQ(validateMacro(R"("${Mutation.cas}")"), Status::SubdocXattrUnknownMacro);
  EXPECT_EQ(validateMacro("${Mutation.CAS}"), Status::SubdocXattrUnknownMacro);  // no quotes
}

TEST(SubdocMacros, CasAndSeqnoArePlaceholdersTheServerFills) {
  const std::string body = R"({"a":1})";
  const std::vector<MutationSpec> specs{
      {Opcode::DictUpsert, kMacro | path_flag::kMkdirP, "txn.cas", R"("${Mutation.CAS}")"},
      {Opcode::DictUpsert, kMacro, "txn.seq", R"("${Mutation.seqno}")"},
      {Opcode::DictUpsert, kMacro, "txn.crc", R"("${Mutation.value_crc32c}")"},
      {Opcode::DictUpsert, kMacro, "txn.cas2", R"("${Mutation.CAS}")"},
      {Opcode::DictUpsert, 0, "b", "2"}};
  auto outcome = mutate(Document{body, datatype::kJson, false}, specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  ASSERT_EQ(outcome.macros.size(), 2u);  // CAS (used twice) and seqno; the CRC is filled
  const std::string finalBody = R"({"a":1,"b":2})";
  const auto sizeBefore = outcome.value.size();
  EXPECT_EQ(fillMutationMacros(outcome.value, outcome.datatype, outcome.macros,
                               0x0102030405060708ULL, 99),
            3u);
  EXPECT_EQ(outcome.value.size(), sizeBefore);  // filled in place
  EXPECT_EQ(xattrValue(outcome, "txn"),
            R"({"cas":"0x0807060504030201","seq":"0x0000000000000063","crc":")" +
                toHex32(crc32c(finalBody)) + R"(","cas2":"0x0807060504030201"})");
}

TEST(SubdocMacros, PlaceholdersAvoidTextAlreadyInTheDocument) {
  // Whatever the placeholder, filling it must touch only the macro's value.
  const std::string value = encodeXattrs({{"keep", R"(["0x0000000000000000"])"}}) + "{}";
  const std::vector<MutationSpec> specs{
      {Opcode::DictUpsert, kMacro, "m", R"("${Mutation.seqno}")"}};
  auto outcome = mutate(Document{value, datatype::kJson | datatype::kXattr, false}, specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  ASSERT_EQ(outcome.macros.size(), 1u);
  EXPECT_EQ(value.find(outcome.macros[0].placeholder), std::string::npos);
  fillMutationMacros(outcome.value, outcome.datatype, outcome.macros, 0, 5);
  EXPECT_EQ(xattrValue(outcome, "keep"), R"(["0x0000000000000000"])");
  EXPECT_EQ(xattrValue(outcome, "m"), R"("0x0000000000000005")");
}

TEST(SubdocMacros, DocumentMacrosExpandFromTheStoredMetadata) {
  MutationContext context;
  context.meta = sampleMeta();
  const std::vector<MutationSpec> specs{
      {Opcode::DictUpsert, kMacro | path_flag::kMkdirP, "r.exp", R"("${$document.exptime}")"},
      {Opcode::DictUpsert, kMacro, "r.cas", R"("${$document.CAS}")"},
      {Opcode::DictUpsert, kMacro, "r.lm", R"("${$document.last_modified}")"}};
  auto outcome = mutate(Document{"{}", datatype::kJson, false}, specs, 0, context);
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_TRUE(outcome.macros.empty());
  EXPECT_EQ(xattrValue(outcome, "r"),
            R"({"exp":1700000000,"cas":"0x16a2f3d8e4b00000","lm":1631134127})");
  const std::vector<MutationSpec> unknown{
      {Opcode::DictUpsert, kMacro, "r", R"("${$document.value_crc32c}")"}};
  outcome = mutate(Document{"{}", datatype::kJson, false}, unknown, 0, context);
  EXPECT_EQ(singleMutationStatus(outcome), Status::SubdocXattrUnknownVattrMacro);
}

TEST(SubdocMacros, FillingWithoutXattrsDoesNothing) {
  std::string value = "{}";
  EXPECT_EQ(fillMutationMacros(value, datatype::kJson, {{MacroKind::kCas, "\"0x1\""}}, 1, 1), 0u);
  EXPECT_EQ(value, "{}");
}

}  // namespace vattr_macro_test
}  // namespace syncwrite::subdoc
