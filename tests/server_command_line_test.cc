// The executables' shared command-line helper (server/command_line.h) and the
// ranged number parser (server/parse_number.h), on flags of this test's own.
#include "server/command_line.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/flags/flag.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/parse_number.h"

ABSL_FLAG(std::string, test_name, "plain", "a string");
ABSL_FLAG(uint16_t, test_port, 7, "a port");
ABSL_FLAG(bool, test_verbose, false, "a switch");
ABSL_FLAG(std::optional<uint16_t>, test_forced, std::nullopt, "an optional number");
ABSL_FLAG(std::vector<std::string>, test_list, std::vector<std::string>({"a", "b"}), "a list");

namespace syncwrite::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kThisFile[] = "tests/server_command_line_test.cc";

class CommandLineTest : public ::testing::Test {
 protected:
  absl::StatusOr<CommandLine> parse(std::vector<std::string> args) {
    return parseFlags(args, kThisFile);
  }
  std::string error(std::vector<std::string> args) {
    absl::StatusOr<CommandLine> line = parseFlags(args, kThisFile);
    EXPECT_EQ(line.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(line.status().message());
  }
};

TEST_F(CommandLineTest, ValuesAfterEqualsOrAsTheNextArgumentWithDashesForUnderscores) {
  auto line = parse({"--test-name=x", "--test_port", "80", "--test-list", "p,q,r"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(absl::GetFlag(FLAGS_test_name), "x");
  EXPECT_EQ(absl::GetFlag(FLAGS_test_port), 80);
  EXPECT_THAT(absl::GetFlag(FLAGS_test_list), ElementsAre("p", "q", "r"));
  EXPECT_TRUE(line->positional.empty());
  EXPECT_FALSE(line->help);
}

TEST_F(CommandLineTest, BoolsTakeNoValueOrAnExplicitOneAndNoClears) {
  ASSERT_TRUE(parse({"--test-verbose"}).ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_verbose));
  ASSERT_TRUE(parse({"--notest-verbose"}).ok());
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_verbose));
  ASSERT_TRUE(parse({"--test-verbose=true"}).ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_verbose));
}

TEST_F(CommandLineTest, AnOptionalIsUnsetByAnEmptyValue) {
  ASSERT_TRUE(parse({"--test-forced", "3"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_forced), 3);
  ASSERT_TRUE(parse({"--test-forced="}).ok());
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_forced).has_value());
}

TEST_F(CommandLineTest, PositionalsStayInOrderAndDoubleDashEndsFlags) {
  auto line = parse({"set", "--test-port=1", "-5", "v", "--", "--test-port=2", "-h"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->positional, ElementsAre("set", "-5", "v", "--test-port=2", "-h"));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_port), 1);
  EXPECT_FALSE(line->help);
}

TEST_F(CommandLineTest, EveryParseResetsTheFileFlagsToTheirDefaultsFirst) {
  ASSERT_TRUE(parse({"--test-name=x", "--test-verbose", "--test-forced=2"}).ok());
  ASSERT_TRUE(parse({"--test-port=9"}).ok());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_name), "plain");
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_verbose));
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_forced).has_value());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_port), 9);
}

TEST_F(CommandLineTest, OnlyTheNamedFilesFlagsAreKnown) {
  // server_flags.cc is linked into this test too: its --port is not ours.
  absl::StatusOr<CommandLine> line = parseFlags({{"--port=1"}}, kThisFile);
  EXPECT_EQ(line.status().message(), "unknown flag --port");
}

TEST_F(CommandLineTest, HelpIsAskedForNotAnError) {
  for (const char* help : {"--help", "-h"}) {
    auto line = parse({"x", help});
    ASSERT_TRUE(line.ok()) << help;
    EXPECT_TRUE(line->help);
  }
}

TEST_F(CommandLineTest, ErrorsNameTheFlagAndTheValue) {
  EXPECT_EQ(error({"--test-colour=red"}), "unknown flag --test-colour");
  EXPECT_EQ(error({"--notest-port"}), "unknown flag --notest-port");
  EXPECT_EQ(error({"--test-port"}), "--test-port needs a value");
  EXPECT_EQ(error({"--test-port", "65536"}), "--test-port: illegal value '65536'");
  EXPECT_EQ(error({"--test-port=x1"}), "--test-port: illegal value 'x1'");
  EXPECT_EQ(error({"--test-verbose=maybe"}), "--test-verbose: illegal value 'maybe'");
}

TEST(FlagsHelp, ListsTheFileFlagsSortedWithTheirDefaults) {
  const std::string help = flagsHelp("usage: t\n", kThisFile);
  EXPECT_THAT(help, HasSubstr("usage: t\nflags:\n  --test-forced "));
  EXPECT_THAT(help, HasSubstr("an optional number (default: none)\n"));
  EXPECT_THAT(help, HasSubstr("a list (default: a,b)\n"));
  EXPECT_THAT(help, HasSubstr("a string (default: \"plain\")\n"));
  EXPECT_THAT(help, HasSubstr("a port (default: 7)\n"));
  EXPECT_THAT(help, HasSubstr("a switch (default: false)\n"));
  EXPECT_LT(help.find("--test-forced"), help.find("--test-verbose"));
  EXPECT_EQ(help.find("--port "), std::string::npos) << "a flag of another file";
}

TEST(ParseNumber, TakesSimpleAtoisSyntaxWithinTheRange) {
  EXPECT_EQ(parseNumber<uint16_t>("65535"), 65535);
  EXPECT_EQ(parseNumber<uint16_t>(" 80\n"), 80);
  EXPECT_EQ(parseNumber<int64_t>("-12"), -12);
  EXPECT_EQ(parseNumber<uint8_t>("9", 1, 9), 9);
  for (const char* bad : {"", " ", "65536", "-1", "12ab", "1 2", "0x10"}) {
    EXPECT_EQ(parseNumber<uint16_t>(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(parseNumber<unsigned>("0", 1), std::nullopt);
  EXPECT_EQ(parseNumber<uint8_t>("10", 1, 9), std::nullopt);
  EXPECT_EQ(parseNumber<int64_t>("9223372036854775808"), std::nullopt);
}

}  // namespace
}  // namespace syncwrite::server
