#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/schema.h"

namespace syncwrite::config {
namespace {

using testing::HasSubstr;

TEST(Schema, BuiltinHasTheKeysOfTheFoundation) {
  const Schema& s = Schema::builtin();
  for (const char* key : {"durability_timeout_mode", "durability_timeout_task_interval",
                          "durability_default_timeout", "durability_min_level",
                          "max_vbucket_visit_duration", "max_vbuckets", "num_nonio_threads"}) {
    EXPECT_NE(s.find(key), nullptr) << key;
  }
  EXPECT_EQ(s.find("no_such_key"), nullptr);
}

TEST(Schema, BuiltinDefaultsAndFlags) {
  const Schema& s = Schema::builtin();
  const KeySpec* mode = s.find("durability_timeout_mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->type, ValueType::kEnum);
  EXPECT_EQ(mode->default_value, "event-driven");
  EXPECT_TRUE(mode->dynamic);
  EXPECT_EQ(mode->values, (std::vector<std::string>{"event-driven", "polling"}));

  const KeySpec* interval = s.find("durability_timeout_task_interval");
  ASSERT_NE(interval, nullptr);
  EXPECT_EQ(interval->type, ValueType::kDurationMs);
  EXPECT_EQ(interval->default_value, 25u);
  EXPECT_EQ(interval->min, 1u);
  EXPECT_EQ(interval->max, 60000u);

  const KeySpec* vbs = s.find("max_vbuckets");
  ASSERT_NE(vbs, nullptr);
  EXPECT_FALSE(vbs->dynamic);
  EXPECT_EQ(vbs->default_value, 1024u);

  const KeySpec* threads = s.find("num_nonio_threads");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->scope, Scope::kServer);
  EXPECT_FALSE(threads->dynamic);
}

TEST(Schema, EveryKeyIsDescribed) {
  for (const auto& k : Schema::builtin().keys()) {
    EXPECT_FALSE(k.description.empty()) << k.name;
    EXPECT_TRUE(k.validate(k.default_value).ok()) << k.name;
  }
}

TEST(KeySpec, ValidateNamesKeyValueAndExpectation) {
  const KeySpec* interval = Schema::builtin().find("durability_timeout_task_interval");
  ASSERT_NE(interval, nullptr);
  EXPECT_TRUE(interval->validate(1u).ok());
  EXPECT_TRUE(interval->validate(60000u).ok());

  absl::Status zero = interval->validate(0u);
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(zero.message()), HasSubstr("durability_timeout_task_interval"));
  EXPECT_THAT(std::string(zero.message()), HasSubstr("0 is out of range"));
  EXPECT_THAT(std::string(zero.message()), HasSubstr("1..60000"));

  absl::Status negative = interval->validate(-5);
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(negative.message()), HasSubstr("-5"));

  EXPECT_FALSE(interval->validate(2.5).ok());
  EXPECT_FALSE(interval->validate("25").ok());
  EXPECT_FALSE(interval->validate(true).ok());
}

TEST(KeySpec, EnumRefusesOtherStrings) {
  const KeySpec* mode = Schema::builtin().find("durability_timeout_mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_TRUE(mode->validate("polling").ok());
  absl::Status s = mode->validate("fast");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("\"fast\""));
  EXPECT_THAT(std::string(s.message()), HasSubstr("one of event-driven, polling"));
  EXPECT_FALSE(mode->validate(1).ok());
}

TEST(KeySpec, ParseText) {
  const Schema& s = Schema::builtin();
  auto interval = s.find("durability_timeout_task_interval")->parseText("250");
  ASSERT_TRUE(interval.ok()) << interval.status();
  EXPECT_EQ(*interval, 250u);
  EXPECT_FALSE(s.find("durability_timeout_task_interval")->parseText("25ms").ok());
  EXPECT_FALSE(s.find("durability_timeout_task_interval")->parseText("").ok());
  EXPECT_FALSE(s.find("durability_timeout_task_interval")->parseText("-1").ok());
  EXPECT_FALSE(s.find("durability_timeout_task_interval")->parseText("99999999999999999999").ok());
  auto mode = s.find("durability_timeout_mode")->parseText("polling");
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(*mode, "polling");
}

TEST(KeySpec, BoolParsesTrueAndFalseOnly) {
  auto schema = Schema::parse(R"({"keys": [{"name": "flag", "type": "bool", "default": false,
      "dynamic": true, "scope": "bucket", "description": "d"}]})");
  ASSERT_TRUE(schema.ok()) << schema.status();
  const KeySpec* flag = schema->find("flag");
  EXPECT_EQ(*flag->parseText("true"), true);
  EXPECT_EQ(*flag->parseText("false"), false);
  absl::StatusOr<nlohmann::json> yes = flag->parseText("yes");
  EXPECT_FALSE(yes.ok());
  EXPECT_THAT(std::string(yes.status().message()), HasSubstr("true or false"));
}

TEST(Schema, ParseRefusesBadSchemas) {
  const char* missing_default = R"({"keys": [{"name": "a", "type": "bool",
      "dynamic": true, "scope": "bucket", "description": "d"}]})";
  absl::StatusOr<Schema> s = Schema::parse(missing_default);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("missing \"default\""));

  const char* bad_default = R"({"keys": [{"name": "a", "type": "unsigned", "min": 1, "max": 3,
      "default": 9, "dynamic": true, "scope": "bucket", "description": "d"}]})";
  s = Schema::parse(bad_default);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("bad default"));

  const char* twice = R"({"keys": [
      {"name": "a", "type": "bool", "default": true, "dynamic": true, "scope": "bucket", "description": "d"},
      {"name": "a", "type": "bool", "default": true, "dynamic": true, "scope": "bucket", "description": "d"}]})";
  s = Schema::parse(twice);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("defined twice"));

  s = Schema::parse(R"({"keys": [{"name": "a", "type": "float", "default": 1, "dynamic": true,
      "scope": "bucket", "description": "d"}]})");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("unknown type \"float\""));

  s = Schema::parse(R"({"keys": [{"name": "a", "type": "enum", "default": "x", "dynamic": true,
      "scope": "bucket", "description": "d"}]})");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("needs \"values\""));

  EXPECT_FALSE(Schema::parse("{").ok());
  EXPECT_FALSE(Schema::parse("[]").ok());
}

}  // namespace
}  // namespace syncwrite::config
