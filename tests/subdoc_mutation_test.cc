// subdoc/mutation.h on the body: each mutation opcode's success and failure
// statuses, MkdirP, the depth limit, document flags, whole-document specs,
// and multi-mutation's all or nothing.
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "subdoc/mutation.h"

namespace syncwrite::subdoc {
namespace mutation_test {

struct Applied {
  Status status;
  std::string value;  // the new body (no xattrs in these tests), or the counter
};

MutationOutcome run(const std::optional<std::string>& body, std::vector<MutationSpec> specs,
                    uint8_t docFlags = 0) {
  std::optional<Document> doc;
  if (body) {
    doc = Document{*body, datatype::kJson, false};
  }
  return mutate(doc, specs, docFlags, {});
}

// One spec: the spec's status, and the new document on success.
Applied one(const std::string& body, Opcode opcode, const std::string& path,
            const std::string& value = {}, uint8_t flags = 0) {
  const auto outcome = run(body, {{opcode, flags, path, value}});
  if (outcome.status != Status::Success) {
    return {singleMutationStatus(outcome), body};
  }
  return {Status::Success, outcome.value};
}

std::string nestedArray(int levels) {
  const auto n = static_cast<std::size_t>(levels);
  return std::string(n, '[') + std::string(n, ']');
}

std::string nestedArrayPath(int levels) {
  std::string path;
  for (int i = 1; i < levels; ++i) {
    path += "[0]";
  }
  return path;
}

TEST(SubdocMutation, DictAddAddsAMissingMember) {
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictAdd, "b", "[1,2]").value, R"({"a":1,"b":[1,2]})");
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictAdd, "a", "2").status, Status::SubdocPathEexists);
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictAdd, "x.y", "2").status, Status::SubdocPathEnoent);
  EXPECT_EQ(one(R"({"a":[1]})", Opcode::DictAdd, "a[0]", "2").status, Status::SubdocPathEinval);
  EXPECT_EQ(one(R"({"a":[1]})", Opcode::DictAdd, "a.b", "2").status, Status::SubdocPathMismatch);
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictAdd, "b", "nope").status, Status::SubdocValueCantinsert);
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictAdd, "b", "1,2").status, Status::SubdocValueCantinsert);
}

TEST(SubdocMutation, DictUpsertReplacesOrAdds) {
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictUpsert, "a", "\"x\"").value, R"({"a":"x"})");
  EXPECT_EQ(one(R"({"a":1})", Opcode::DictUpsert, "b", "{}").value, R"({"a":1,"b":{}})");
}

TEST(SubdocMutation, MkdirPCreatesIntermediateObjectsOnly) {
  EXPECT_EQ(one(R"({})", Opcode::DictUpsert, "x.y.z", "1", path_flag::kMkdirP).value,
            R"({"x":{"y":{"z":1}}})");
  // Never an array element.
  EXPECT_EQ(one(R"({"a":[]})", Opcode::DictUpsert, "a[0].b", "1", path_flag::kMkdirP).status,
            Status::SubdocPathEnoent);
}

TEST(SubdocMutation, DeleteRemovesAMemberOrElement) {
  EXPECT_EQ(one(R"({"a":1,"b":2})", Opcode::Delete, "a").value, R"({"b":2})");
  EXPECT_EQ(one(R"({"a":[1,2,3]})", Opcode::Delete, "a[1]").value, R"({"a":[1,3]})");
  EXPECT_EQ(one(R"({"a":[1,2,3]})", Opcode::Delete, "a[-1]").value, R"({"a":[1,2]})");
  EXPECT_EQ(one(R"({"a":1})", Opcode::Delete, "b").status, Status::SubdocPathEnoent);
  EXPECT_EQ(one(R"({"a":1})", Opcode::Delete, "").status, Status::Einval);
}

TEST(SubdocMutation, ReplaceNeedsAnExistingPath) {
  EXPECT_EQ(one(R"({"a":[0,1]})", Opcode::Replace, "a[0]", "null").value, R"({"a":[null,1]})");
  EXPECT_EQ(one(R"({"a":1})", Opcode::Replace, "b", "2").status, Status::SubdocPathEnoent);
  EXPECT_EQ(one(R"({"a":1})", Opcode::Replace, "a", "{").status, Status::SubdocValueCantinsert);
}

TEST(SubdocMutation, ReplaceBeyondTheDepthLimitIsValueEtoodeep) {
  // kv_engine's SubdocReplace_ArrayDeep.
  const std::string doc = nestedArray(32);
  const std::string path = nestedArrayPath(32);
  EXPECT_EQ(one(doc, Opcode::Replace, path, "\"deep\"").status, Status::Success);
  EXPECT_EQ(one(doc, Opcode::Replace, path, "[0]").status, Status::SubdocValueEtoodeep);
  EXPECT_EQ(one(doc, Opcode::Replace, "[0]", "[]").value, "[[]]");
}

TEST(SubdocMutation, ArrayPushFirstAndLast) {
  EXPECT_EQ(one("[]", Opcode::ArrayPushLast, "", "0").value, "[0]");
  EXPECT_EQ(one(R"({"a":[1]})", Opcode::ArrayPushLast, "a", "2,3").value, R"({"a":[1,2,3]})");
  EXPECT_EQ(one(R"({"a":[1]})", Opcode::ArrayPushFirst, "a", "\"x\",[0]").value,
            R"({"a":["x",[0],1]})");
  EXPECT_EQ(one(R"({})", Opcode::ArrayPushLast, "a", "1").status, Status::SubdocPathEnoent);
  EXPECT_EQ(one(R"({})", Opcode::ArrayPushLast, "a.b", "1", path_flag::kMkdirP).value,
            R"({"a":{"b":[1]}})");
  EXPECT_EQ(one(R"({"a":{}})", Opcode::ArrayPushLast, "a", "1").status, Status::SubdocPathMismatch);
  EXPECT_EQ(one(R"({"a":[]})", Opcode::ArrayPushLast, "a", "1,").status,
            Status::SubdocValueCantinsert);
}

TEST(SubdocMutation, ArrayInsertAtAnExistingPositionOrTheEnd) {
  EXPECT_EQ(one("[1,2,4,5]", Opcode::ArrayInsert, "[2]", "3").value, "[1,2,3,4,5]");
  EXPECT_EQ(one("[1]", Opcode::ArrayInsert, "[1]", "2").value, "[1,2]");
  EXPECT_EQ(one("[]", Opcode::ArrayInsert, "[0]", "1").value, "[1]");
  EXPECT_EQ(one("[1]", Opcode::ArrayInsert, "[3]", "2").status, Status::SubdocPathEnoent);
  EXPECT_EQ(one("[1]", Opcode::ArrayInsert, "[-1]", "2").status, Status::SubdocPathEinval);
  EXPECT_EQ(one(R"({"a":[]})", Opcode::ArrayInsert, "a", "2").status, Status::SubdocPathEinval);
  EXPECT_EQ(one(R"({"a":{}})", Opcode::ArrayInsert, "a[0]", "2").status,
            Status::SubdocPathMismatch);
}

TEST(SubdocMutation, ArrayAddUniqueComparesPrimitivesAsText) {
  EXPECT_EQ(one("[1,\"1\"]", Opcode::ArrayAddUnique, "", "1.0").value, "[1,\"1\",1.0]");
  EXPECT_EQ(one("[1,\"1\"]", Opcode::ArrayAddUnique, "", "\"1\"").status,
            Status::SubdocPathEexists);
  EXPECT_EQ(one("[1]", Opcode::ArrayAddUnique, "", "[1]").status, Status::SubdocValueCantinsert);
  EXPECT_EQ(one("[[1]]", Opcode::ArrayAddUnique, "", "2").status, Status::SubdocPathMismatch);
  EXPECT_EQ(one("{}", Opcode::ArrayAddUnique, "s", "2", path_flag::kMkdirP).value, R"({"s":[2]})");
}

TEST(SubdocMutation, CounterAddsTheDeltaAndReturnsTheNewValue) {
  auto outcome = run(R"({"n":10})", {{Opcode::Counter, 0, "n", "-3"}});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.value, R"({"n":7})");
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(outcome.results[0].index, 0);
  EXPECT_EQ(outcome.results[0].value, "7");
  // A missing member whose parent exists starts at zero.
  outcome = run(R"({})", {{Opcode::Counter, 0, "n", "5"}});
  EXPECT_EQ(outcome.value, R"({"n":5})");
  EXPECT_EQ(one(R"({})", Opcode::Counter, "a.n", "5").status, Status::SubdocPathEnoent);
  EXPECT_EQ(one(R"({})", Opcode::Counter, "a.n", "5", path_flag::kMkdirP).value,
            R"({"a":{"n":5}})");
}

TEST(SubdocMutation, CounterFailures) {
  // kv_engine's SubdocCounter_InvalidNotInt, _InvalidIncr, _InvalidERange, _Limits.
  for (const char* notInteger : {"true", "null", "\"s\"", "[0]", R"({"f":1})", "1.1"}) {
    EXPECT_EQ(one(std::string(R"({"k":)") + notInteger + "}", Opcode::Counter, "k", "1").status,
              Status::SubdocPathMismatch)
        << notInteger;
    EXPECT_EQ(one(R"({"k":10})", Opcode::Counter, "k", notInteger).status,
              Status::SubdocDeltaEinval)
        << notInteger;
  }
  EXPECT_EQ(one(R"({"k":10})", Opcode::Counter, "k", "0").status, Status::SubdocDeltaEinval);
  EXPECT_EQ(one(R"({"k":10})", Opcode::Counter, "k", "9223372036854775808").status,
            Status::SubdocDeltaEinval);
  EXPECT_EQ(one(R"({"k":9223372036854775808})", Opcode::Counter, "k", "1").status,
            Status::SubdocNumErange);
  EXPECT_EQ(one(R"({"k":-9223372036854775810})", Opcode::Counter, "k", "1").status,
            Status::SubdocNumErange);
  constexpr auto kMax = std::numeric_limits<int64_t>::max();
  constexpr auto kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(one("{\"k\":" + std::to_string(kMax - 1) + "}", Opcode::Counter, "k", "1").value,
            "{\"k\":" + std::to_string(kMax) + "}");
  EXPECT_EQ(one("{\"k\":" + std::to_string(kMax) + "}", Opcode::Counter, "k", "1").status,
            Status::SubdocValueCantinsert);
  EXPECT_EQ(one("{\"k\":" + std::to_string(kMin) + "}", Opcode::Counter, "k", "-1").status,
            Status::SubdocValueCantinsert);
}

TEST(SubdocMutation, PathErrorsAndDocumentErrors) {
  EXPECT_EQ(one(R"({})", Opcode::DictUpsert, "a[", "1").status, Status::SubdocPathEinval);
  EXPECT_EQ(one(R"({"a":)", Opcode::DictUpsert, "a", "1").status, Status::SubdocDocNotJson);
  std::string tooDeep = "[" + nestedArray(33) + "]";
  EXPECT_EQ(one(tooDeep, Opcode::ArrayPushLast, "", "1").status, Status::SubdocDocE2deep);
  const auto notJson = mutate(Document{"plain", 0, false},
                              std::vector<MutationSpec>{{Opcode::DictUpsert, 0, "a", "1"}}, 0, {});
  EXPECT_EQ(singleMutationStatus(notJson), Status::SubdocDocNotJson);
}

TEST(SubdocMutation, AddingAMemberPastTheDepthLimitIsE2big) {
  // subjson's testTooDeepDict: a member at level 32 is fine, one deeper is not.
  std::string path = "c";
  for (int i = 1; i < 30; ++i) {
    path += ".c";
  }
  const auto outcome =
      run("{}", {{Opcode::DictUpsert, path_flag::kMkdirP, path + ".last", "\"at max\""}});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(one(outcome.value, Opcode::DictAdd, path + ".last.more", "1").status,
            Status::SubdocPathE2big);
  EXPECT_EQ(one(outcome.value, Opcode::DictUpsert, path + ".other", "[1]").status,
            Status::SubdocValueEtoodeep);
}

TEST(SubdocMutation, MultiMutationIsAllOrNothing) {
  const std::string doc = R"({"login_count":41,"state":"out"})";
  auto outcome = run(doc, {{Opcode::ArrayAddUnique, path_flag::kMkdirP, "locations", "\"1.2.3.4\""},
                           {Opcode::Counter, 0, "login_count", "1"},
                           {Opcode::DictUpsert, 0, "state", "\"in\""}});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.value, R"({"login_count":42,"state":"in","locations":["1.2.3.4"]})");
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(outcome.results[0].index, 1);
  EXPECT_EQ(outcome.results[0].value, "42");

  outcome = run(doc, {{Opcode::DictUpsert, 0, "state", "\"in\""},
                      {Opcode::Counter, 0, "state", "1"},
                      {Opcode::DictUpsert, 0, "x", "1"}});
  EXPECT_EQ(outcome.status, Status::SubdocMultiPathFailure);
  EXPECT_EQ(outcome.failedIndex, 1);
  EXPECT_EQ(outcome.failedStatus, Status::SubdocPathMismatch);
  EXPECT_TRUE(outcome.value.empty());
  EXPECT_TRUE(outcome.results.empty());
}

TEST(SubdocMutation, LaterSpecsSeeEarlierOnes) {
  const auto outcome = run("{}", {{Opcode::DictAdd, 0, "a", "[]"},
                                  {Opcode::ArrayPushLast, 0, "a", "1"},
                                  {Opcode::Counter, 0, "a[0]", "1"}});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.value, R"({"a":[2]})");
}

TEST(SubdocMutation, RequestErrors) {
  auto status = [](std::vector<MutationSpec> specs, uint8_t docFlags = 0) {
    return run(R"({"a":1})", std::move(specs), docFlags).status;
  };
  EXPECT_EQ(status({{Opcode::Get, 0, "a", ""}}), Status::SubdocInvalidCombo);
  EXPECT_EQ(status({{Opcode::DictUpsert, 0, "a", ""}}), Status::Einval);  // no value
  EXPECT_EQ(status({{Opcode::Delete, 0, "a", "1"}}), Status::Einval);     // a value
  EXPECT_EQ(status({{Opcode::DictUpsert, 0, "", "1"}}), Status::Einval);  // no path
  EXPECT_EQ(status({{Opcode::ArrayInsert, path_flag::kMkdirP, "[0]", "1"}}), Status::Einval);
  EXPECT_EQ(status({{Opcode::Replace, 0, "a", "1"}}, doc_flag::kMkdoc), Status::Einval);
  EXPECT_EQ(status({{Opcode::DictUpsert, 0, "a", "1"}}, doc_flag::kMkdoc | doc_flag::kAdd),
            Status::Einval);
  EXPECT_EQ(status({{Opcode::DictUpsert, 0, std::string(1025, 'a'), "1"}}), Status::Einval);
  std::vector<MutationSpec> seventeen(17, MutationSpec{Opcode::DictUpsert, 0, "a", "1"});
  EXPECT_EQ(status(seventeen), Status::SubdocInvalidCombo);
  EXPECT_EQ(
      mutate(std::nullopt, std::vector<MutationSpec>{{Opcode::DictUpsert, 0, "a", "1"}}, 0, {})
          .status,
      Status::KeyEnoent);
}

TEST(SubdocMutation, MkdocCreatesTheDocumentWithTheRightRoot) {
  auto outcome = run(std::nullopt, {{Opcode::DictUpsert, 0, "a.b", "1"}}, doc_flag::kMkdoc);
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_TRUE(outcome.created);
  EXPECT_EQ(outcome.value, R"({"a":{"b":1}})");  // Mkdoc implies MkdirP
  EXPECT_EQ(outcome.datatype, datatype::kJson);
  outcome = run(std::nullopt, {{Opcode::ArrayPushLast, 0, "", "1"}}, doc_flag::kMkdoc);
  EXPECT_EQ(outcome.value, "[1]");
  // On an existing document Mkdoc is a plain mutation.
  outcome = run(R"({"x":0})", {{Opcode::DictUpsert, 0, "a", "1"}}, doc_flag::kMkdoc);
  EXPECT_FALSE(outcome.created);
  EXPECT_EQ(outcome.value, R"({"x":0,"a":1})");
}

TEST(SubdocMutation, AddCreatesOnlyAMissingDocument) {
  auto outcome = run(std::nullopt, {{Opcode::DictAdd, 0, "a", "1"}}, doc_flag::kAdd);
  EXPECT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.value, R"({"a":1})");
  outcome = run(R"({})", {{Opcode::DictAdd, 0, "a", "1"}}, doc_flag::kAdd);
  EXPECT_EQ(outcome.status, Status::KeyEexists);
}

TEST(SubdocMutation, WholeDocumentSetReplacesTheBody) {
  auto outcome = run(R"({"a":1})", {{Opcode::WholeSet, 0, "", "not json"}});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.value, "not json");
  EXPECT_EQ(outcome.datatype, 0);
  outcome = run(std::nullopt, {{Opcode::WholeSet, 0, "", R"({ "b" : 2 })"}}, doc_flag::kMkdoc);
  EXPECT_EQ(outcome.value, R"({ "b" : 2 })");  // stored as sent
  EXPECT_EQ(outcome.datatype, datatype::kJson);
  outcome = run(R"({})", {{Opcode::WholeSet, 0, "", "{}"}, {Opcode::DictAdd, 0, "c", "3"}});
  EXPECT_EQ(outcome.value, R"({"c":3})");
}

TEST(SubdocMutation, RandomSpecsAnswerAStatusNeverACrash) {
  // Deterministic noise from the path and value alphabets, for ASan/UBSan.
  constexpr std::string_view kAlphabet = "ab.[]-01`\\\"{}:,9 ";
  constexpr std::array kOpcodes{Opcode::DictAdd,     Opcode::DictUpsert,     Opcode::Delete,
                                Opcode::Replace,     Opcode::ArrayPushLast,  Opcode::ArrayPushFirst,
                                Opcode::ArrayInsert, Opcode::ArrayAddUnique, Opcode::Counter};
  std::mt19937 random(55);
  auto noise = [&](std::size_t max) {
    std::string text(random() % max, ' ');
    for (auto& c : text) {
      c = kAlphabet[random() % kAlphabet.size()];
    }
    return text;
  };
  std::string doc = R"({"a":[1,{"b":[]}],"b":{"a":0}})";
  for (int round = 0; round < 3000; ++round) {
    const MutationSpec spec{kOpcodes[random() % kOpcodes.size()],
                            static_cast<uint8_t>(random() % 2), noise(12), noise(8)};
    const auto outcome = run(doc, {spec});
    if (outcome.status == Status::Success) {
      doc = outcome.value;  // keep mutating the result
    }
  }
  EXPECT_FALSE(doc.empty());
}

}  // namespace mutation_test
}  // namespace syncwrite::subdoc
