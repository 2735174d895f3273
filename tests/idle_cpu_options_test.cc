// Command line of the idle-CPU harness.
#include "bench/idle_cpu/options.h"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<Options> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "idle_cpu");
  return ParseOptions(static_cast<int>(args.size()), args.data());
}

TEST(IdleCpuOptions, DefaultsAreTheIssuesGrid) {
  absl::StatusOr<Options> o = Parse({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_THAT(o->buckets, ElementsAre(1u, 10u, 30u));
  EXPECT_THAT(o->modes, ElementsAre("polling", "event-driven"));
  EXPECT_DOUBLE_EQ(o->window_s, 10);
  EXPECT_DOUBLE_EQ(o->settle_s, 1);
  EXPECT_EQ(o->json_path, "bench/results/idle_cpu.json");
  EXPECT_EQ(o->server_path, "");
  EXPECT_FALSE(o->slow_clock);
  EXPECT_FALSE(o->help);
}

TEST(IdleCpuOptions, ValuesAsNextArgumentOrAfterEquals) {
  absl::StatusOr<Options> o =
      Parse({"--buckets", "1", "--modes=event-driven,polling", "--window", "2.5", "--settle=0",
             "--json", "/tmp/x.json", "--server=/opt/s", "--slow-clock", "--top", "3",
             "--slow-clock-buckets=4", "--start-timeout", "5"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_THAT(o->buckets, ElementsAre(1u));
  EXPECT_THAT(o->modes, ElementsAre("event-driven", "polling"));
  EXPECT_DOUBLE_EQ(o->window_s, 2.5);
  EXPECT_DOUBLE_EQ(o->settle_s, 0);
  EXPECT_EQ(o->json_path, "/tmp/x.json");
  EXPECT_EQ(o->server_path, "/opt/s");
  EXPECT_TRUE(o->slow_clock);
  EXPECT_EQ(o->top_threads, 3u);
  EXPECT_EQ(o->slow_clock_buckets, 4u);
  EXPECT_DOUBLE_EQ(o->start_timeout_s, 5);
}

TEST(IdleCpuOptions, BadValuesAreRefusedNamingOptionAndValue) {
  struct Case {
    std::vector<const char*> args;
    const char* expected;
  } cases[] = {
      {{"--buckets", "0"}, "--buckets \"0\""},
      {{"--buckets", "1,,3"}, "--buckets \"1,,3\""},
      {{"--buckets", ""}, "--buckets"},
      {{"--buckets", "ten"}, "--buckets \"ten\""},
      {{"--modes", "poll"}, "--modes \"poll\""},
      {{"--modes", "polling,"}, "--modes"},
      {{"--window", "0"}, "--window \"0\""},
      {{"--window", "abc"}, "--window: illegal value 'abc'"},
      {{"--window", "inf"}, "--window"},
      {{"--settle", "-1"}, "--settle \"-1\""},
      {{"--top", "-2"}, "--top"},
      {{"--json="}, "--json"},
      {{"--slow-clock=maybe"}, "--slow-clock: illegal value 'maybe'"},
      {{"--slow-clock-buckets", "0"}, "--slow-clock-buckets \"0\""},
      {{"--start-timeout", "-3"}, "--start-timeout \"-3\""},
      {{"--window"}, "--window needs a value"},
      {{"--bogus"}, "unknown flag --bogus"},
      {{"positional"}, "unexpected argument \"positional\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Options> o = Parse(c.args);
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_THAT(o.status().message(), HasSubstr(c.expected));
  }
}

TEST(IdleCpuOptions, EveryParseStartsFromTheDefaults) {
  ASSERT_TRUE(Parse({"--window", "3", "--slow-clock"}).ok());
  absl::StatusOr<Options> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_DOUBLE_EQ(o->window_s, 10);
  EXPECT_FALSE(o->slow_clock);
}

TEST(IdleCpuOptions, HelpIsAFlagAndTheUsageListsEveryFlagWithItsDefault) {
  absl::StatusOr<Options> o = Parse({"--help"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
  const std::string usage = Usage();
  for (const char* text :
       {"--buckets ", "(default: 1,10,30)", "--modes ", "(default: polling,event-driven)",
        "--window ", "(default: 10)", "--settle ", "(default: 1)", "--json ",
        "(default: \"bench/results/idle_cpu.json\")", "--server ", "--slow-clock ",
        "(default: false)", "--slow-clock-buckets ", "(default: 3)", "--top ", "(default: 5)",
        "--start-timeout ", "(default: 60)"}) {
    EXPECT_THAT(usage, HasSubstr(text));
  }
}

}  // namespace
}  // namespace syncwrite::bench
