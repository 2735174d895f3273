// Xattr specs through subdoc/lookup.h and subdoc/mutation.h: reading and
// writing xattrs beside the body, the request rules (xattrs first, flag
// combinations, key rules, the one-key policy), tombstones, and that
// untouched xattrs and bodies keep their bytes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "subdoc/lookup.h"
#include "subdoc/mutation.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {
namespace xattr_test {

constexpr uint8_t kXattr = path_flag::kXattrPath;

struct Stored {
  std::string value;
  uint8_t datatype;
  bool deleted = false;
  Document doc() const { return {value, datatype, deleted}; }
};

Stored withXattrs(const Xattrs& xattrs, const std::string& body) {
  return {encodeXattrs(xattrs) + body,
          static_cast<uint8_t>(datatype::kXattr | (body.empty() ? 0 : datatype::kJson))};
}

Xattrs xattrsOf(const MutationOutcome& outcome) {
  SplitValue split;
  Xattrs xattrs;
  EXPECT_TRUE(splitValue(outcome.value, outcome.datatype, split));
  if (!split.xattrs.empty()) {
    EXPECT_TRUE(decodeXattrs(split.xattrs, xattrs));
  }
  return xattrs;
}

std::string bodyOf(const MutationOutcome& outcome) {
  SplitValue split;
  EXPECT_TRUE(splitValue(outcome.value, outcome.datatype, split));
  return std::string(split.body);
}

const Stored kDoc = withXattrs(
    {{"meta", R"({"author":"a","tags":[1,2]})"}, {"_sync", R"({"rev":1})"}}, R"({"body":1})");

TEST(SubdocXattr, LookupReadsXattrsAndBodyInOneRequest) {
  const std::vector<LookupSpec> specs{{Opcode::Get, kXattr, "meta.author"},
                                      {Opcode::Get, kXattr, "_sync"},
                                      {Opcode::Exists, kXattr, "meta.tags[1]"},
                                      {Opcode::GetCount, kXattr, "meta.tags"},
                                      {Opcode::Get, kXattr, "nope"},
                                      {Opcode::Get, 0, "body"},
                                      {Opcode::WholeGet, 0, ""}};
  const auto outcome = lookup(kDoc.doc(), specs, 0, {});
  EXPECT_EQ(outcome.status, Status::SubdocMultiPathFailure);
  ASSERT_EQ(outcome.results.size(), specs.size());
  EXPECT_EQ(outcome.results[0].value, "\"a\"");
  EXPECT_EQ(outcome.results[1].value, R"({"rev":1})");
  EXPECT_EQ(outcome.results[2].status, Status::Success);
  EXPECT_EQ(outcome.results[3].value, "2");
  EXPECT_EQ(outcome.results[4].status, Status::SubdocPathEnoent);
  EXPECT_EQ(outcome.results[5].value, "1");
  EXPECT_EQ(outcome.results[6].value, R"({"body":1})");  // the body only, never the xattrs
}

TEST(SubdocXattr, XattrSpecsComeFirst) {
  const std::vector<LookupSpec> lookups{{Opcode::Get, 0, "body"}, {Opcode::Get, kXattr, "meta"}};
  EXPECT_EQ(lookup(kDoc.doc(), lookups, 0, {}).status, Status::SubdocInvalidXattrOrder);
  const std::vector<MutationSpec> mutations{{Opcode::DictUpsert, 0, "b", "1"},
                                            {Opcode::DictUpsert, kXattr, "meta.x", "1"}};
  EXPECT_EQ(mutate(kDoc.doc(), mutations, 0, {}).status, Status::SubdocInvalidXattrOrder);
}

TEST(SubdocXattr, RequestRulesForXattrSpecs) {
  auto status = [](const MutationSpec& spec) {
    return mutate(kDoc.doc(), std::vector<MutationSpec>{spec}, 0, {}).status;
  };
  EXPECT_EQ(status({Opcode::DictUpsert, path_flag::kExpandMacros, "a", R"("${Mutation.CAS}")"}),
            Status::SubdocXattrInvalidFlagCombo);
  EXPECT_EQ(status({Opcode::DictUpsert, kXattr, "!bad.a", "1"}), Status::XattrEinval);
  EXPECT_EQ(status({Opcode::DictUpsert, kXattr, "waytoolongforakey", "1"}), Status::XattrEinval);
  EXPECT_EQ(status({Opcode::DictUpsert, kXattr, "$document.CAS", "1"}),
            Status::SubdocXattrCantModifyVattr);
  EXPECT_EQ(status({Opcode::DictUpsert, kXattr | path_flag::kExpandMacros, "m", R"("${Nope}")"}),
            Status::SubdocXattrUnknownMacro);
  EXPECT_EQ(status({Opcode::Counter, kXattr | path_flag::kExpandMacros, "m", "1"}),
            Status::Einval);  // COUNTER takes no macros
}

TEST(SubdocXattr, TwoXattrKeysInOneRequest) {
  const std::vector<MutationSpec> specs{{Opcode::DictUpsert, kXattr, "meta.x", "1"},
                                        {Opcode::DictUpsert, kXattr, "_sync.rev", "2"}};
  // kv_engine 7.6 and later (the default).
  auto outcome = mutate(kDoc.doc(), specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  // Before 7.6: one key per request.
  MutationContext context;
  context.xattrKeys = XattrKeyPolicy::kOneKey;
  EXPECT_EQ(mutate(kDoc.doc(), specs, 0, context).status, Status::SubdocXattrInvalidKeyCombo);
  const std::vector<MutationSpec> sameKey{{Opcode::DictUpsert, kXattr, "meta.x", "1"},
                                          {Opcode::DictUpsert, kXattr, "meta.y", "2"}};
  EXPECT_EQ(mutate(kDoc.doc(), sameKey, 0, context).status, Status::Success);
}

TEST(SubdocXattr, MutationKeepsUntouchedPartsByteForByte) {
  const Stored spaced =
      withXattrs({{"meta", R"({ "a" : 1 })"}, {"other", R"([ 1, 2 ])"}}, R"({ "body" : [ 1 ] })");
  const std::vector<MutationSpec> specs{{Opcode::DictUpsert, kXattr, "meta.b", "2"}};
  const auto outcome = mutate(spaced.doc(), specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  const auto xattrs = xattrsOf(outcome);
  ASSERT_EQ(xattrs.size(), 2u);
  EXPECT_EQ(xattrs[0].value, R"({"a":1,"b":2})");  // the modified xattr is rewritten
  EXPECT_EQ(xattrs[1].value, R"([ 1, 2 ])");       // the untouched one keeps its bytes
  EXPECT_EQ(bodyOf(outcome), R"({ "body" : [ 1 ] })");
  EXPECT_EQ(outcome.datatype, datatype::kXattr | datatype::kJson);
}

TEST(SubdocXattr, AWholeXattrIsReadAsStored) {
  const Stored spaced = withXattrs({{"meta", R"({ "a" : 1 })"}}, "{}");
  const auto outcome = lookup(
      spaced.doc(),
      std::vector<LookupSpec>{{Opcode::Get, kXattr, "meta"}, {Opcode::Get, kXattr, "meta.a"}}, 0,
      {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.results[0].value, R"({ "a" : 1 })");
  EXPECT_EQ(outcome.results[1].value, "1");
}

TEST(SubdocXattr, CreatingAndDeletingXattrs) {
  const Stored plain{R"({"a":1})", datatype::kJson};
  auto outcome = mutate(plain.doc(),
                        std::vector<MutationSpec>{{Opcode::DictUpsert, kXattr | path_flag::kMkdirP,
                                                   "txn.id.atr", "\"x\""}},
                        0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.datatype, datatype::kXattr | datatype::kJson);
  ASSERT_EQ(xattrsOf(outcome).size(), 1u);
  EXPECT_EQ(xattrsOf(outcome)[0].value, R"({"id":{"atr":"x"}})");
  const Stored withTxn{outcome.value, outcome.datatype};
  outcome =
      mutate(withTxn.doc(), std::vector<MutationSpec>{{Opcode::Delete, kXattr, "txn", ""}}, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.value, R"({"a":1})");  // no xattrs left: no section, no xattr bit
  EXPECT_EQ(outcome.datatype, datatype::kJson);
}

TEST(SubdocXattr, FailingXattrSpecFailsTheWholeMutation) {
  const std::vector<MutationSpec> specs{{Opcode::DictUpsert, kXattr, "meta.x", "1"},
                                        {Opcode::DictAdd, kXattr, "meta.author", "\"b\""},
                                        {Opcode::DictUpsert, 0, "c", "1"}};
  const auto outcome = mutate(kDoc.doc(), specs, 0, {});
  EXPECT_EQ(outcome.status, Status::SubdocMultiPathFailure);
  EXPECT_EQ(outcome.failedIndex, 1);
  EXPECT_EQ(outcome.failedStatus, Status::SubdocPathEexists);
}

TEST(SubdocXattr, TombstonesNeedAccessDeleted) {
  Stored tombstone = withXattrs({{"_sync", R"({"rev":2})"}}, "");
  tombstone.deleted = true;
  const std::vector<LookupSpec> specs{{Opcode::Get, kXattr, "_sync.rev"}};
  EXPECT_EQ(lookup(tombstone.doc(), specs, 0, {}).status, Status::KeyEnoent);
  auto outcome = lookup(tombstone.doc(), specs, doc_flag::kAccessDeleted, {});
  EXPECT_EQ(outcome.status, Status::SubdocSuccessDeleted);
  EXPECT_EQ(outcome.results[0].value, "2");
  EXPECT_EQ(singleLookupStatus(outcome), Status::SubdocSuccessDeleted);
  const std::vector<LookupSpec> missing{{Opcode::Get, kXattr, "_sync.nope"}};
  EXPECT_EQ(lookup(tombstone.doc(), missing, doc_flag::kAccessDeleted, {}).status,
            Status::SubdocMultiPathFailureDeleted);

  const std::vector<MutationSpec> write{{Opcode::DictUpsert, kXattr, "_sync.rev", "3"}};
  EXPECT_EQ(mutate(tombstone.doc(), write, 0, {}).status, Status::KeyEnoent);
  const auto written = mutate(tombstone.doc(), write, doc_flag::kAccessDeleted, {});
  EXPECT_EQ(written.status, Status::SubdocSuccessDeleted);
  EXPECT_TRUE(written.deleted);
}

TEST(SubdocXattr, ReviveMakesATombstoneAlive) {
  Stored tombstone = withXattrs({{"_sync", "1"}}, "");
  tombstone.deleted = true;
  const std::vector<MutationSpec> specs{{Opcode::DictUpsert, kXattr, "_sync", "2"}};
  const auto revived =
      mutate(tombstone.doc(), specs, doc_flag::kAccessDeleted | doc_flag::kReviveDocument, {});
  EXPECT_EQ(revived.status, Status::Success);
  EXPECT_FALSE(revived.deleted);
  EXPECT_EQ(
      mutate(kDoc.doc(), specs, doc_flag::kAccessDeleted | doc_flag::kReviveDocument, {}).status,
      Status::SubdocCanOnlyReviveDeletedDocuments);
  EXPECT_EQ(mutate(kDoc.doc(), specs, doc_flag::kReviveDocument, {}).status, Status::Einval);
}

TEST(SubdocXattr, CreateAsDeletedMakesATombstoneWithXattrsOnly) {
  const std::vector<MutationSpec> specs{{Opcode::DictUpsert, kXattr, "txn.op", "\"insert\""}};
  const auto outcome =
      mutate(std::nullopt, specs,
             doc_flag::kAdd | doc_flag::kCreateAsDeleted | doc_flag::kAccessDeleted, {});
  ASSERT_EQ(outcome.status, Status::SubdocSuccessDeleted);
  EXPECT_TRUE(outcome.deleted);
  EXPECT_TRUE(outcome.created);
  EXPECT_TRUE(bodyOf(outcome).empty());
  EXPECT_EQ(outcome.datatype, datatype::kXattr);
  const std::vector<MutationSpec> body{{Opcode::DictUpsert, 0, "a", "1"}};
  EXPECT_EQ(mutate(std::nullopt, body, doc_flag::kAdd | doc_flag::kCreateAsDeleted, {}).status,
            Status::Einval);
  EXPECT_EQ(mutate(std::nullopt, specs, doc_flag::kCreateAsDeleted, {}).status, Status::Einval);
}

TEST(SubdocXattr, WholeDocumentDeleteKeepsSystemXattrs) {
  const std::vector<MutationSpec> specs{{Opcode::DictUpsert, kXattr, "_sync.rev", "9"},
                                        {Opcode::WholeDelete, 0, "", ""}};
  const auto outcome = mutate(kDoc.doc(), specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_TRUE(outcome.deleted);
  const auto xattrs = xattrsOf(outcome);
  ASSERT_EQ(xattrs.size(), 1u);
  EXPECT_EQ(xattrs[0].key, "_sync");
  EXPECT_EQ(xattrs[0].value, R"({"rev":9})");
  EXPECT_TRUE(bodyOf(outcome).empty());
  EXPECT_EQ(outcome.datatype, datatype::kXattr);
  // Nothing may follow it, and no body spec may precede it.
  EXPECT_EQ(mutate(kDoc.doc(),
                   std::vector<MutationSpec>{{Opcode::WholeDelete, 0, "", ""},
                                             {Opcode::DictUpsert, 0, "a", "1"}},
                   0, {})
                .status,
            Status::SubdocInvalidCombo);
  EXPECT_EQ(mutate(kDoc.doc(),
                   std::vector<MutationSpec>{{Opcode::DictUpsert, 0, "a", "1"},
                                             {Opcode::WholeDelete, 0, "", ""}},
                   0, {})
                .status,
            Status::SubdocInvalidCombo);
}

TEST(SubdocXattr, ReplaceBodyWithXattrThenDeleteTheStagedValue) {
  // kv_engine's XattrTest.ReplaceBodyWithXattr: how a transaction commits.
  const Stored staged =
      withXattrs({{"tnx", R"({"op":{"staged":{"couchbase":{"version":"cheshire-cat"}}}})"}},
                 R"({"couchbase":{"version":"mad-hatter"}})");
  const std::vector<MutationSpec> specs{{Opcode::ReplaceBodyWithXattr, kXattr, "tnx.op.staged", ""},
                                        {Opcode::Delete, kXattr, "tnx.op.staged", ""}};
  const auto outcome = mutate(staged.doc(), specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(bodyOf(outcome), R"({"couchbase":{"version":"cheshire-cat"}})");
  ASSERT_EQ(xattrsOf(outcome).size(), 1u);
  EXPECT_EQ(xattrsOf(outcome)[0].value, R"({"op":{}})");
  EXPECT_EQ(outcome.datatype, datatype::kXattr | datatype::kJson);
}

TEST(SubdocXattr, ReplaceBodyWithXattrRevivesAStagedInsert) {
  Stored tombstone = withXattrs({{"txn", R"({"staged":{"v":1}})"}}, "");
  tombstone.deleted = true;
  const std::vector<MutationSpec> specs{{Opcode::ReplaceBodyWithXattr, kXattr, "txn.staged", ""},
                                        {Opcode::Delete, kXattr, "txn", ""}};
  const auto outcome =
      mutate(tombstone.doc(), specs, doc_flag::kAccessDeleted | doc_flag::kReviveDocument, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_FALSE(outcome.deleted);
  EXPECT_EQ(outcome.value, R"({"v":1})");
  EXPECT_EQ(outcome.datatype, datatype::kJson);
}

TEST(SubdocXattr, ReplaceBodyWithXattrFailures) {
  auto run = [](const MutationSpec& spec) {
    return mutate(kDoc.doc(), std::vector<MutationSpec>{spec}, 0, {});
  };
  // kv_engine's ReplaceBodyWithXattr_WithoutXattrFlag.
  EXPECT_EQ(run({Opcode::ReplaceBodyWithXattr, 0, "meta", ""}).status, Status::Einval);
  EXPECT_EQ(run({Opcode::ReplaceBodyWithXattr, kXattr, "meta", "1"}).status, Status::Einval);
  EXPECT_EQ(singleMutationStatus(run({Opcode::ReplaceBodyWithXattr, kXattr, "meta.nope", ""})),
            Status::SubdocPathEnoent);
  // Allowed in a mutation only.
  EXPECT_EQ(lookup(kDoc.doc(),
                   std::vector<LookupSpec>{{Opcode::ReplaceBodyWithXattr, kXattr, "meta"}}, 0, {})
                .status,
            Status::SubdocInvalidCombo);
}

TEST(SubdocXattr, CorruptStoredXattrsAreAnErrorNotACrash) {
  // A 12-byte section whose one pair claims 9 bytes where 4 remain.
  const Stored corrupt{std::string("\x00\x00\x00\x08\x00\x00\x00\x09k\0{}", 12) + "{}",
                       datatype::kXattr | datatype::kJson};
  EXPECT_EQ(lookup(corrupt.doc(), std::vector<LookupSpec>{{Opcode::Get, kXattr, "k"}}, 0, {})
                .results[0]
                .status,
            Status::Einval);
  EXPECT_EQ(mutate(corrupt.doc(),
                   std::vector<MutationSpec>{{Opcode::DictUpsert, kXattr, "k.a", "1"}}, 0, {})
                .status,
            Status::Einval);
  // A body-only mutation does not read the xattrs: their bytes are carried over.
  const auto bodyOnly =
      mutate(corrupt.doc(), std::vector<MutationSpec>{{Opcode::DictUpsert, 0, "a", "1"}}, 0, {});
  ASSERT_EQ(bodyOnly.status, Status::Success);
  EXPECT_EQ(bodyOnly.value, corrupt.value.substr(0, 12) + R"({"a":1})");
  const Stored truncated{std::string("\x00\x00\x01\x00", 4), datatype::kXattr};
  EXPECT_EQ(
      lookup(truncated.doc(), std::vector<LookupSpec>{{Opcode::WholeGet, 0, ""}}, 0, {}).status,
      Status::Einval);
}

}  // namespace xattr_test
}  // namespace syncwrite::subdoc
