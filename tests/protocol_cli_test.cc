// syncwrite-cli: argument parsing and the line printed for each outcome.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/cli/cli_args.h"
#include "server/cli/cli_outcome.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::cli {
namespace {

using durability::Level;
using protocol::Status;
using ::testing::HasSubstr;

CliArgs parseOk(const std::vector<std::string>& args) {
  absl::StatusOr<CliArgs> parsed = parseArgs(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : CliArgs{};
}

std::string parseError(const std::vector<std::string>& args) {
  absl::StatusOr<CliArgs> parsed = parseArgs(args);
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(CliArgsTest, Defaults) {
  const CliArgs args = parseOk({"get", "foo"});
  EXPECT_EQ(args.host, "127.0.0.1");
  EXPECT_EQ(args.port, 11210);
  EXPECT_EQ(args.bucket, "default");
  EXPECT_EQ(args.command, Command::kGet);
  EXPECT_EQ(args.key, "foo");
  EXPECT_EQ(args.vbucketOfKey(), 115);  // crc32("foo") >> 16 & 0x7fff mod 1024
  EXPECT_FALSE(args.durability);
}

TEST(CliArgsTest, DurableSetWithOptionsAnywhere) {
  const CliArgs args = parseOk({"--port", "12000", "set", "k", "v", "--durability",
                                "persist_to_majority", "--timeout", "500", "--bucket", "b2"});
  EXPECT_EQ(args.port, 12000);
  EXPECT_EQ(args.bucket, "b2");
  EXPECT_EQ(args.command, Command::kSet);
  EXPECT_EQ(args.key, "k");
  EXPECT_EQ(args.value, "v");
  ASSERT_TRUE(args.durability);
  EXPECT_EQ(args.durability->level, Level::kPersistToMajority);
  EXPECT_EQ(args.durability->timeout_ms, 500);
}

TEST(CliArgsTest, RawLevelAndReservedTimeoutAreSentAsGiven) {
  const CliArgs args = parseOk({"delete", "k", "--durability", "9", "--timeout", "0"});
  ASSERT_TRUE(args.durability);
  EXPECT_EQ(static_cast<int>(args.durability->level), 9);
  EXPECT_EQ(args.durability->timeout_ms, 0);
}

TEST(CliArgsTest, DurabilityNoneIsAPlainWrite) {
  EXPECT_FALSE(parseOk({"set", "k", "v", "--durability", "none"}).durability);
}

TEST(CliArgsTest, VbucketSelection) {
  EXPECT_EQ(parseOk({"get", "foo", "--vbuckets", "64"}).vbucketOfKey(), 51);
  EXPECT_EQ(parseOk({"get", "foo", "--vbucket", "7"}).vbucketOfKey(), 7);
}

TEST(CliArgsTest, StatsGroupIsOptional) {
  EXPECT_EQ(parseOk({"stats"}).key, "");
  EXPECT_EQ(parseOk({"stats", "durability"}).key, "durability");
}

TEST(CliArgsTest, SetVbucketByNameOrNumber) {
  const CliArgs named = parseOk({"set-vbucket", "5", "replica"});
  EXPECT_EQ(named.target_vbucket, 5);
  EXPECT_EQ(named.state, protocol::VbucketState::kReplica);
  EXPECT_EQ(parseOk({"set-vbucket", "5", "4"}).state, protocol::VbucketState::kDead);
}

TEST(CliArgsTest, ErrorsNameTheArgument) {
  EXPECT_THAT(parseError({}), HasSubstr("no command"));
  EXPECT_THAT(parseError({"frobnicate"}), HasSubstr("unknown command \"frobnicate\""));
  EXPECT_THAT(parseError({"set", "k"}), HasSubstr("set takes 2"));
  EXPECT_THAT(parseError({"get", "k", "--port", "70000"}), HasSubstr("--port"));
  EXPECT_THAT(parseError({"get", "k", "--port"}), HasSubstr("--port needs a value"));
  EXPECT_THAT(parseError({"get", "k", "--durability", "majority"}), HasSubstr("apply to set"));
  EXPECT_THAT(parseError({"set", "k", "v", "--timeout", "5"}), HasSubstr("needs --durability"));
  EXPECT_THAT(parseError({"set", "k", "v", "--durability", "most"}), HasSubstr("\"most\""));
  EXPECT_THAT(parseError({"set-vbucket", "5", "zombie"}), HasSubstr("\"zombie\""));
  EXPECT_THAT(parseError({"get", "k", "--colour", "red"}), HasSubstr("unknown flag --colour"));
  EXPECT_THAT(parseError({"get", "k", "--vbucket", "70000"}),
              HasSubstr("--vbucket: illegal value '70000'"));
  EXPECT_THAT(parseError({"get", "k", "--vbuckets", "0"}), HasSubstr("--vbuckets must be"));
  EXPECT_THAT(parseError({"set-vbucket", "x", "active"}), HasSubstr("VB must be a number"));
  EXPECT_THAT(parseError({"failover", "n1"}), HasSubstr("failover needs --cluster FILE"));
  EXPECT_THAT(parseError({"failover"}), HasSubstr("failover takes 1"));
}

TEST(CliArgsTest, FailoverNamesTheNodeAndTheClusterFile) {
  const CliArgs args = parseOk({"failover", "n2", "--cluster", "/etc/cluster.json"});
  EXPECT_EQ(args.command, Command::kFailover);
  EXPECT_EQ(args.key, "n2");
  EXPECT_EQ(args.cluster_file, "/etc/cluster.json");
}

TEST(CliArgsTest, EveryParseStartsFromTheDefaults) {
  EXPECT_EQ(parseOk({"get", "k", "--port", "1", "--vbucket", "3"}).port, 1);
  const CliArgs args = parseOk({"get", "k"});
  EXPECT_EQ(args.port, 11210);
  EXPECT_FALSE(args.vbucket);
}

TEST(CliArgsTest, HelpAnywhereAsksForTheUsageWhichListsEveryFlagWithItsDefault) {
  EXPECT_EQ(parseOk({"set", "k", "-h"}).command, Command::kHelp);
  EXPECT_EQ(parseOk({"--help"}).command, Command::kHelp);
  EXPECT_EQ(parseOk({"help"}).command, Command::kHelp);
  const std::string text = usage();
  for (const char* flag : {"--bucket ", "--durability ", "--host ", "--port ", "--timeout ",
                           "--vbucket ", "--vbuckets "}) {
    EXPECT_THAT(text, HasSubstr(flag));
  }
  for (const char* value : {"(default: \"default\")", "(default: \"127.0.0.1\")",
                            "(default: 11210)", "(default: 1024)", "(default: none)"}) {
    EXPECT_THAT(text, HasSubstr(value));
  }
}

protocol::Response answer(Status status, std::string_view context = "") {
  std::string bytes;
  protocol::appendErrorResponse(bytes, protocol::Opcode::kSet, status, 1, context);
  protocol::Response response;
  response.status = status;
  response.value = bytes.substr(protocol::kHeaderSize);
  return response;
}

TEST(CliOutcomeTest, AmbiguousNamesTheTimeoutAskedFor) {
  const CliArgs timed = parseOk({"set", "k", "v", "--durability", "majority", "--timeout", "500"});
  EXPECT_EQ(describeFailure(timed, answer(Status::kSyncWriteAmbiguous)),
            "ambiguous: durability timeout after 500 ms");
  const CliArgs untimed = parseOk({"set", "k", "v", "--durability", "majority"});
  EXPECT_EQ(describeFailure(untimed, answer(Status::kSyncWriteAmbiguous, "durability timeout")),
            "ambiguous: durability timeout after the bucket's default timeout");
  EXPECT_EQ(
      describeFailure(timed, answer(Status::kSyncWriteAmbiguous, "SyncWrite ambiguous: timeout")),
      "ambiguous: durability timeout after 500 ms");
  EXPECT_EQ(describeFailure(
                untimed, answer(Status::kSyncWriteAmbiguous, "SyncWrite ambiguous: left_active")),
            "ambiguous: vbucket 98 left the active state before the write resolved");
  EXPECT_EQ(describeFailure(untimed,
                            answer(Status::kSyncWriteAmbiguous, "SyncWrite ambiguous: shutdown")),
            "ambiguous: the server shut down before the write resolved");
  EXPECT_EQ(describeFailure(untimed, answer(Status::kSyncWriteAmbiguous, "cosmic rays")),
            "ambiguous: cosmic rays");
}

TEST(CliOutcomeTest, EveryStatusReads) {
  const CliArgs args = parseOk({"set", "k", "v"});
  EXPECT_EQ(describeFailure(args, answer(Status::kKeyNotFound)), "not found");
  EXPECT_EQ(describeFailure(args, answer(Status::kSyncWriteInProgress)),
            "sync write in progress on k");
  EXPECT_EQ(describeFailure(args, answer(Status::kDurabilityImpossible)), "durability impossible");
  EXPECT_EQ(describeFailure(args, answer(Status::kDurabilityImpossible, "1 of 3 nodes")),
            "durability impossible (server: 1 of 3 nodes)");
  EXPECT_EQ(describeFailure(args, answer(Status::kDurabilityInvalidLevel)),
            "invalid durability level");
  EXPECT_EQ(describeFailure(args, answer(Status::kDurabilityInvalidLevel,
                                         "invalid durability level 9 (expected 1..3)")),
            "invalid durability level 9 (expected 1..3)");
  EXPECT_EQ(describeFailure(parseOk({"stats", "bogus"}), answer(Status::kKeyNotFound)),
            "unknown stat group \"bogus\"");
  EXPECT_EQ(describeFailure(args, answer(Status::kNotMyVbucket)), "not my vbucket (vbucket 98)");
  EXPECT_EQ(describeFailure(args, answer(Status::kNoBucket)), "no bucket");
  EXPECT_EQ(describeFailure(args, answer(Status::kEinval, "key too long")),
            "invalid arguments: key too long");
  EXPECT_EQ(describeFailure(args, answer(Status::kTooBig)), "value too large");
  EXPECT_EQ(describeFailure(args, answer(Status::kKeyExists)), "key exists: k");
  EXPECT_EQ(describeFailure(args, answer(static_cast<Status>(0x86))),
            "temporary failure (status 0x86)");
  EXPECT_EQ(describeFailure(args, answer(static_cast<Status>(0x4242))),
            "unknown status (status 0x4242)");
}

}  // namespace
}  // namespace syncwrite::server::cli
