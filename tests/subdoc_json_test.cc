// subdoc/json_value.h: where this library's output differs from kv_engine's
// byte-preserving subjson. A modified body is written by nlohmann's dump();
// these tests pin what that changes, so a change of library or of approach
// shows up here.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "subdoc/json_value.h"
#include "subdoc/lookup.h"
#include "subdoc/mutation.h"

namespace syncwrite::subdoc {
namespace json_test {

std::string mutated(const std::string& body) {
  const auto outcome = mutate(Document{body, datatype::kJson, false},
                              std::vector<MutationSpec>{{Opcode::DictUpsert, 0, "z", "0"}}, 0, {});
  EXPECT_EQ(outcome.status, Status::Success);
  return outcome.value;
}

TEST(SubdocJson, AModifiedBodyIsNormalisedByDump) {
  // Member order is kept; whitespace goes.
  EXPECT_EQ(mutated(R"({ "b" : 1,  "a" : [ 1 , 2 ] })"), R"({"b":1,"a":[1,2],"z":0})");
  // Numbers in nlohmann's form; integers beyond 64 bits lose precision.
  EXPECT_EQ(mutated(R"({"e":1e2,"f":1.50,"g":-0})"), R"({"e":100.0,"f":1.5,"g":0,"z":0})");
  EXPECT_EQ(mutated(R"({"big":123456789012345678901234567890})"),
            R"({"big":1.2345678901234568e+29,"z":0})");
  // Strings keep only the escapes JSON requires.
  EXPECT_EQ(mutated(R"({"s":"\u00e9\/"})"), "{\"s\":\"\xc3\xa9/\",\"z\":0}");
  // The last of duplicate keys wins, in the first one's place.
  EXPECT_EQ(mutated(R"({"d":1,"x":2,"d":3})"), R"({"d":3,"x":2,"z":0})");
}

TEST(SubdocJson, LookupsReturnTheDumpOfTheValueFound) {
  const std::string body = R"({"a": { "b" : [ 1.0, "\u0041" ] }})";
  const auto outcome = lookup(Document{body, datatype::kJson, false},
                              std::vector<LookupSpec>{{Opcode::Get, 0, "a"}}, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_EQ(outcome.results[0].value, R"({"b":[1.0,"A"]})");
}

TEST(SubdocJson, AnUnmodifiedBodyKeepsItsBytes) {
  const std::string body = R"({ "b" : 1e2 })";
  const auto outcome = mutate(
      Document{body, datatype::kJson, false},
      std::vector<MutationSpec>{{Opcode::DictUpsert, path_flag::kXattrPath, "x", "1"}}, 0, {});
  ASSERT_EQ(outcome.status, Status::Success);
  EXPECT_TRUE(outcome.value.ends_with(body));
}

TEST(SubdocJson, ParseEnforcesTheDepthFromTheGivenLevel) {
  Json value;
  EXPECT_EQ(parseJson("[[1]]", value, kMaxDepth - 2), ParseResult::kOk);
  EXPECT_EQ(parseJson("[[1]]", value, kMaxDepth - 1), ParseResult::kTooDeep);
  EXPECT_EQ(parseJson("1", value, kMaxDepth), ParseResult::kOk);
  EXPECT_EQ(parseJson("1", value, kMaxDepth + 1), ParseResult::kTooDeep);
  EXPECT_EQ(parseJson("[1,", value), ParseResult::kNotJson);
  EXPECT_EQ(parseJson("1 2", value), ParseResult::kNotJson);
  EXPECT_EQ(parseJson("\"\xff\"", value), ParseResult::kNotJson);  // not UTF-8
}

}  // namespace json_test
}  // namespace syncwrite::subdoc
