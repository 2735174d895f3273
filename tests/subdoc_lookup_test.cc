// subdoc/lookup.h: GET, EXISTS, GET_COUNT and the whole-document GET on a
// body, each failure status, the depth limit, and multi-lookup semantics.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "subdoc/lookup.h"

namespace syncwrite::subdoc {
namespace lookup_test {

// The example document of kv_engine's docs/SubDocument.md ("Path").
const std::string kProduct =
    R"({"type":"product","pType":"toy","pDetails":{"audience":"children"},)"
    R"("pDistributors":[{"dName":"A","dAdded":["Feb",36,2025]},)"
    R"({"dName":"B","dAdded":["May",72,1492]}],)"
    R"("dot.ted.field":{"subfield":1},"back`tick`field":null})";

Document jsonDoc(const std::string& body) { return {body, datatype::kJson, false}; }

SpecResult lookupOne(const std::string& body, Opcode opcode, const std::string& path,
                     uint8_t datatype = datatype::kJson) {
  const std::vector<LookupSpec> specs{{opcode, 0, path}};
  const auto outcome = lookup(Document{body, datatype, false}, specs, 0, {});
  if (outcome.results.size() != 1) {
    return {outcome.status, {}};
  }
  return outcome.results.front();
}

std::string nestedDict(int levels) {
  std::string doc = "{}";
  for (int depth = levels - 1; depth > 0; --depth) {
    std::string outer = "{\"";
    outer.append(std::to_string(depth)).append("\":").append(doc).append("}");
    doc = std::move(outer);
  }
  return doc;
}

TEST(SubdocLookup, GetReturnsTheValueAtPath) {
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "type").value, "\"product\"");
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pDistributors[1].dAdded[2]").value, "1492");
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pDistributors[-1].dAdded[-1]").value, "1492");
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "`dot.ted.field`.subfield").value, "1");
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "`back``tick``field`").value, "null");
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pDetails").value, R"({"audience":"children"})");
}

TEST(SubdocLookup, ExistsAnswersWithoutAValue) {
  const auto found = lookupOne(kProduct, Opcode::Exists, "pDetails.audience");
  EXPECT_EQ(found.status, Status::Success);
  EXPECT_TRUE(found.value.empty());
  EXPECT_EQ(lookupOne(kProduct, Opcode::Exists, "pDetails.age").status, Status::SubdocPathEnoent);
}

TEST(SubdocLookup, GetCountCountsMembersOrElements) {
  EXPECT_EQ(lookupOne(kProduct, Opcode::GetCount, "pDistributors").value, "2");
  EXPECT_EQ(lookupOne(kProduct, Opcode::GetCount, "pDetails").value, "1");
  EXPECT_EQ(lookupOne(kProduct, Opcode::GetCount, "").value, "6");
  EXPECT_EQ(lookupOne(kProduct, Opcode::GetCount, "type").status, Status::SubdocPathMismatch);
}

TEST(SubdocLookup, MissingPathIsEnoent) {
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "nope").status, Status::SubdocPathEnoent);
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pDistributors[2]").status, Status::SubdocPathEnoent);
  EXPECT_EQ(lookupOne("{\"a\":[]}", Opcode::Get, "a[-1]").status, Status::SubdocPathEnoent);
}

TEST(SubdocLookup, WrongContainerIsMismatch) {
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pDistributors.count").status,
            Status::SubdocPathMismatch);
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pType.category").status, Status::SubdocPathMismatch);
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "pDetails[0]").status, Status::SubdocPathMismatch);
}

TEST(SubdocLookup, BadPathIsEinvalAndTooManyComponentsE2big) {
  EXPECT_EQ(lookupOne(kProduct, Opcode::Get, "a..b").status, Status::SubdocPathEinval);
  std::string path = "1";
  for (int i = 2; i <= 32; ++i) {
    path += "." + std::to_string(i);
  }
  EXPECT_EQ(lookupOne(nestedDict(33), Opcode::Get, path).status, Status::SubdocPathE2big);
}

TEST(SubdocLookup, DocumentAtTheDepthLimitIsReadable) {
  // kv_engine's SubdocGet_DictDeep: 32 levels and a 31-component path.
  std::string path = "1";
  for (int i = 2; i < 32; ++i) {
    path += "." + std::to_string(i);
  }
  EXPECT_EQ(lookupOne(nestedDict(32), Opcode::Get, path).value, "{}");
}

TEST(SubdocLookup, DocumentTooDeepIsDocE2deep) {
  EXPECT_EQ(lookupOne(nestedDict(33), Opcode::Get, "1").status, Status::SubdocDocE2deep);
  // A hostile document is refused at the limit, not parsed to the end.
  const std::string hostile = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  EXPECT_EQ(lookupOne(hostile, Opcode::Get, "[0]").status, Status::SubdocDocE2deep);
}

TEST(SubdocLookup, NotJsonIsDocNotJson) {
  EXPECT_EQ(lookupOne("{\"a\":1}", Opcode::Get, "a", /*datatype=*/0).status,
            Status::SubdocDocNotJson);
  EXPECT_EQ(lookupOne("{\"a\":", Opcode::Get, "a").status, Status::SubdocDocNotJson);
}

TEST(SubdocLookup, WholeDocumentGetReturnsTheBodyBytes) {
  const std::string body = "{ \"a\" : 1 }";
  const std::vector<LookupSpec> specs{{Opcode::WholeGet, 0, ""}};
  auto outcome = lookup(jsonDoc(body), specs, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.results[0].value, body);
  outcome = lookup(jsonDoc(""), specs, 0, {});
  EXPECT_EQ(outcome.results[0].status, Status::SubdocPathEnoent);
}

TEST(SubdocLookup, MultiLookupGivesEachSpecItsStatus) {
  const std::string doc = R"({"from":"mnunberg","to":"couchbase","subject":"Subdoc"})";
  const std::vector<LookupSpec> specs{{Opcode::Get, 0, "from"},
                                      {Opcode::Get, 0, "to"},
                                      {Opcode::Get, 0, "cc"},
                                      {Opcode::Exists, 0, "bcc"},
                                      {Opcode::Get, 0, "subject"}};
  const auto outcome = lookup(jsonDoc(doc), specs, 0, {});
  EXPECT_EQ(outcome.status, Status::SubdocMultiPathFailure);
  ASSERT_EQ(outcome.results.size(), 5u);
  EXPECT_EQ(outcome.results[0].value, "\"mnunberg\"");
  EXPECT_EQ(outcome.results[1].value, "\"couchbase\"");
  EXPECT_EQ(outcome.results[2].status, Status::SubdocPathEnoent);
  EXPECT_EQ(outcome.results[3].status, Status::SubdocPathEnoent);
  EXPECT_EQ(outcome.results[4].value, "\"Subdoc\"");
  EXPECT_EQ(singleLookupStatus(outcome), Status::SubdocMultiPathFailure);
}

TEST(SubdocLookup, SixteenSpecsAtMost) {
  std::vector<LookupSpec> specs(kMaxSpecs, LookupSpec{Opcode::Get, 0, "a"});
  EXPECT_EQ(lookup(jsonDoc("{\"a\":1}"), specs, 0, {}).status, Status::Success);
  specs.push_back({Opcode::Get, 0, "a"});
  const auto outcome = lookup(jsonDoc("{\"a\":1}"), specs, 0, {});
  EXPECT_EQ(outcome.status, Status::SubdocInvalidCombo);
  EXPECT_TRUE(outcome.results.empty());
  EXPECT_EQ(lookup(jsonDoc("{}"), std::vector<LookupSpec>{}, 0, {}).status,
            Status::SubdocInvalidCombo);
}

TEST(SubdocLookup, RequestErrors) {
  const auto doc = jsonDoc("{\"a\":1}");
  auto run = [&](const LookupSpec& spec, uint8_t docFlags = 0) {
    return lookup(doc, std::vector<LookupSpec>{spec}, docFlags, {}).status;
  };
  EXPECT_EQ(run({Opcode::DictUpsert, 0, "a"}), Status::SubdocInvalidCombo);
  EXPECT_EQ(run({Opcode::Get, 0, ""}), Status::Einval);  // GET needs a path
  EXPECT_EQ(run({Opcode::Get, path_flag::kMkdirP, "a"}), Status::Einval);
  EXPECT_EQ(run({Opcode::WholeGet, 0, "a"}), Status::Einval);
  EXPECT_EQ(run({Opcode::Get, 0, std::string(1025, 'a')}), Status::Einval);
  EXPECT_EQ(run({Opcode::Get, 0, "a"}, doc_flag::kMkdoc), Status::Einval);
  EXPECT_EQ(lookup(std::nullopt, std::vector<LookupSpec>{{Opcode::Get, 0, "a"}}, 0, {}).status,
            Status::KeyEnoent);
  EXPECT_EQ(lookup(Document{"{}", datatype::kJson | datatype::kSnappy, false},
                   std::vector<LookupSpec>{{Opcode::Get, 0, "a"}}, 0, {})
                .status,
            Status::Einval);
}

TEST(SubdocLookup, SingleLookupStatusIsTheSpecs) {
  const std::vector<LookupSpec> specs{{Opcode::Get, 0, "b"}};
  EXPECT_EQ(singleLookupStatus(lookup(jsonDoc("{\"a\":1}"), specs, 0, {})),
            Status::SubdocPathEnoent);
}

}  // namespace lookup_test
}  // namespace syncwrite::subdoc
