// Integration tests: the classic memcached commands against the real
// syncwrite-server — quiet reads and writes, counters, append/prepend,
// QUITQ, default_bucket, memcached's answer shapes for clients that never
// say HELLO — and the same mutations as SyncWrites (commit and timeout).
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "server/protocol/byte_order.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::DurabilitySpec;
using protocol::Opcode;
using protocol::RequestFields;
using protocol::Status;
using testing::counterExtras;
using testing::ServerProcess;

constexpr std::string_view kOpenDefaultBucket =
    R"({"default_bucket": "default", "buckets": {"default": {"flush_enabled": true,
        "replicas": ["replica1"], "simulated_replicas": {"replica1": {"ack_delay_ms": 0}}}}})";

protocol::Client plainClient(const ServerProcess& server) { return server.connectRaw(); }

// "major.minor.patch", digits only, major not 0 (no std::regex: g++ 12's
// -Wmaybe-uninitialized fires inside it in the asan build).
bool isBareVersion(const std::string& text) {
  int parts = 0;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    const std::string part = text.substr(start, dot == std::string::npos ? dot : dot - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    if (parts == 0 && std::stoul(part) == 0) return false;
    ++parts;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts == 3;
}

// Sends `requests` in one batch followed by a NOOP; returns every answer up
// to and including the NOOP's.
std::vector<protocol::Response> batch(protocol::Client& client,
                                      std::vector<RequestFields> requests) {
  std::string bytes;
  for (RequestFields& r : requests) {
    r.opaque = client.nextOpaque();
    protocol::appendRequest(bytes, r);
  }
  const uint32_t noop = client.nextOpaque();
  protocol::appendRequest(bytes, {.opcode = Opcode::kNoop, .opaque = noop});
  EXPECT_TRUE(client.sendRaw(bytes).ok());
  std::vector<protocol::Response> answers;
  while (true) {
    auto answer = client.readResponse();
    if (!answer.ok()) {
      ADD_FAILURE() << answer.status();
      break;
    }
    answers.push_back(*answer);
    if (answer->opaque == noop) break;
  }
  return answers;
}

TEST(ServerMemcached, APlainClientWorksInTheDefaultBucket) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  auto client = plainClient(server);  // no HELLO, no SASL, no SELECT_BUCKET
  auto set = client.set(0, "k", "v");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->status, Status::kSuccess);
  auto version = client.version();
  ASSERT_TRUE(version.ok());
  // A bare major.minor.patch, as kv_engine answers; libmemcached refuses a
  // major version of 0 (server/version.h).
  EXPECT_TRUE(isBareVersion(version->value)) << version->value;
  auto deleted = client.del(0, "k");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, Status::kSuccess);
  EXPECT_EQ(deleted->cas, 0u);  // memcached's shape for a client that never said HELLO
}

TEST(ServerMemcached, DefaultBucketNeedsAuthenticationWhenTheServerHasUsers) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"default_bucket": "default",
      "users": {"u": {"password": "p"}}, "buckets": {"default": {}}})"));
  // Refused NoAccess, which a client without XERROR is not sent: kv_engine
  // disconnects it (Connection::remapErrorCode).
  auto refused = plainClient(server);
  ASSERT_TRUE(refused
                  .send({.opcode = Opcode::kSet,
                         .opaque = 1,
                         .extras = std::string(8, '\0'),
                         .key = "k",
                         .value = "v"})
                  .ok());
  EXPECT_TRUE(refused.waitForClose().ok());
  auto client = plainClient(server);
  ASSERT_EQ(client.saslPlain("u", "p")->status, Status::kSuccess);
  EXPECT_EQ(client.set(0, "k", "v")->status, Status::kSuccess);
}

TEST(ServerMemcached, AnUnknownDefaultBucketIsRefusedAtStart) {
  ServerProcess server;
  server.spawn(R"({"default_bucket": "nope", "buckets": {"default": {}}})", {}, /*listen=*/false);
  EXPECT_NE(server.wait(), 0);
  EXPECT_NE(server.stderrText().find("default_bucket 'nope'"), std::string::npos)
      << server.stderrText();
}

TEST(ServerMemcached, QuietCommandsAnswerOnlyWhatTheyMust) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  auto client = plainClient(server);
  const std::string flags(8, '\0');
  auto answers =
      batch(client, {
                        {.opcode = Opcode::kSetQ, .extras = flags, .key = "a", .value = "1"},
                        {.opcode = Opcode::kAddQ, .extras = flags, .key = "a", .value = "2"},
                        {.opcode = Opcode::kGetQ, .key = "missing"},
                        {.opcode = Opcode::kGetKQ, .key = "a"},
                        {.opcode = Opcode::kDeleteQ, .key = "missing"},
                        {.opcode = Opcode::kReplaceQ, .extras = flags, .key = "a", .value = "3"},
                        {.opcode = Opcode::kGetK, .key = "a"},
                    });
  ASSERT_EQ(answers.size(), 5u);  // ADDQ's failure, GETKQ's hit, DELETEQ's miss, GETK, NOOP
  EXPECT_EQ(answers[0].opcode, Opcode::kAddQ);
  EXPECT_EQ(answers[0].status, Status::kKeyExists);
  EXPECT_EQ(answers[1].opcode, Opcode::kGetKQ);
  EXPECT_EQ(answers[1].key, "a");
  EXPECT_EQ(answers[1].value, "1");
  EXPECT_EQ(answers[2].opcode, Opcode::kDeleteQ);
  EXPECT_EQ(answers[2].status, Status::kKeyNotFound);
  EXPECT_EQ(answers[3].opcode, Opcode::kGetK);
  EXPECT_EQ(answers[3].key, "a");
  EXPECT_EQ(answers[3].value, "3");
  EXPECT_EQ(answers[4].opcode, Opcode::kNoop);
}

TEST(ServerMemcached, CountersFollowMemcachedsRules) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  auto client = plainClient(server);
  auto call = [&](Opcode opcode, std::string_view key, uint64_t delta, uint64_t initial,
                  uint32_t expiry = 0) {
    const std::string extras = counterExtras(delta, initial, expiry);
    auto r = [&] {
      EXPECT_TRUE(client.send({.opcode = opcode, .opaque = 9, .extras = extras, .key = key}).ok());
      return client.readResponse();
    }();
    EXPECT_TRUE(r.ok());
    return *r;
  };
  auto counterOf = [](const protocol::Response& r) { return protocol::wire::load64(r.value, 0); };

  EXPECT_EQ(call(Opcode::kIncrement, "absent", 1, 0, 0xffffffff).status, Status::kKeyNotFound);
  auto created = call(Opcode::kIncrement, "c", 5, 10);
  ASSERT_EQ(created.status, Status::kSuccess);
  EXPECT_EQ(counterOf(created), 10u);  // created with the initial value
  EXPECT_EQ(counterOf(call(Opcode::kIncrement, "c", 5, 0)), 15u);
  EXPECT_EQ(client.get(0, "c")->value, "15");                       // stored as decimal text
  EXPECT_EQ(counterOf(call(Opcode::kDecrement, "c", 100, 0)), 0u);  // stops at 0
  ASSERT_EQ(client.set(0, "max", "18446744073709551615")->status, Status::kSuccess);
  EXPECT_EQ(counterOf(call(Opcode::kIncrement, "max", 2, 0)), 1u);  // wraps at 2^64
  ASSERT_EQ(client.set(0, "text", "abc")->status, Status::kSuccess);
  EXPECT_EQ(call(Opcode::kIncrement, "text", 1, 0).status, Status::kDeltaBadval);
}

TEST(ServerMemcached, AppendAndPrependKeepTheItemsFlags) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  auto client = plainClient(server);
  auto concat = [&](Opcode opcode, std::string_view key, std::string_view value) {
    EXPECT_TRUE(client.send({.opcode = opcode, .opaque = 3, .key = key, .value = value}).ok());
    return *client.readResponse();
  };
  EXPECT_EQ(concat(Opcode::kAppend, "none", "x").status, Status::kNotStored);
  ASSERT_EQ(client.set(0, "s", "mid", {.flags = 42})->status, Status::kSuccess);
  EXPECT_EQ(concat(Opcode::kAppend, "s", ">").status, Status::kSuccess);
  EXPECT_EQ(concat(Opcode::kPrepend, "s", "<").status, Status::kSuccess);
  auto got = client.get(0, "s");
  EXPECT_EQ(got->value, "<mid>");
  EXPECT_EQ(protocol::wire::load32(got->extras, 0), 42u);
}

// kv_engine's answers (daemon/mcbp_executors.cc verbosity_executor,
// daemon/protocol/mcbp/gat_context.cc, daemon/mcbp_validators.cc
// ExpectedCas::NotSet, appendprepend_context.cc): VERBOSITY is Success with no
// body; GATQ answers nothing on a miss and like GAT on a hit; a request CAS on
// GET, INCREMENT or TOUCH is Einval; APPEND with a CAS to an absent key is
// NotStored, as without one.
TEST(ServerMemcached, VerbosityGatqAndRequestCasAnswerAsKvEngine) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  auto client = plainClient(server);
  ASSERT_EQ(client.set(0, "k", "v", {.flags = 5})->status, Status::kSuccess);
  std::string level;
  protocol::wire::append32(level, 1);
  std::string expiry;
  protocol::wire::append32(expiry, 0);
  const std::string counter = counterExtras(1, 0, 0);
  auto answers =
      batch(client, {
                        {.opcode = Opcode::kVerbosity, .extras = level},
                        {.opcode = Opcode::kGatQ, .extras = expiry, .key = "missing"},
                        {.opcode = Opcode::kGatQ, .extras = expiry, .key = "k"},
                        {.opcode = Opcode::kGet, .cas = 1, .key = "k"},
                        {.opcode = Opcode::kIncrement, .cas = 1, .extras = counter, .key = "n"},
                        {.opcode = Opcode::kTouch, .cas = 1, .extras = expiry, .key = "k"},
                        {.opcode = Opcode::kAppend, .cas = 1, .key = "absent", .value = "x"},
                    });
  ASSERT_EQ(answers.size(), 7u);  // all but GATQ's miss, and the NOOP
  EXPECT_EQ(answers[0].opcode, Opcode::kVerbosity);
  EXPECT_EQ(answers[0].status, Status::kSuccess);
  EXPECT_TRUE(answers[0].extras.empty() && answers[0].key.empty() && answers[0].value.empty());
  EXPECT_EQ(answers[1].opcode, Opcode::kGatQ);
  EXPECT_EQ(answers[1].status, Status::kSuccess);
  EXPECT_EQ(answers[1].value, "v");
  ASSERT_EQ(answers[1].extras.size(), 4u);
  EXPECT_EQ(protocol::wire::load32(answers[1].extras, 0), 5u);
  for (size_t i : {2, 3, 4}) {
    EXPECT_EQ(answers[i].status, Status::kEinval) << toString(answers[i].opcode);
    EXPECT_NE(answers[i].errorContext().find("takes no CAS"), std::string::npos)
        << answers[i].errorContext();
  }
  EXPECT_EQ(answers[2].opcode, Opcode::kGet);
  EXPECT_EQ(answers[3].opcode, Opcode::kIncrement);
  EXPECT_EQ(answers[4].opcode, Opcode::kTouch);
  EXPECT_EQ(answers[5].opcode, Opcode::kAppend);
  EXPECT_EQ(answers[5].status, Status::kNotStored);
  EXPECT_EQ(answers[6].opcode, Opcode::kNoop);
  EXPECT_EQ(client.get(0, "n")->status, Status::kKeyNotFound) << "a refused INCREMENT created it";
  EXPECT_EQ(client.get(0, "absent")->status, Status::kKeyNotFound);
}

TEST(ServerMemcached, QuitQuietlyClosesWithoutAnAnswer) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  auto client = plainClient(server);
  ASSERT_TRUE(client.send({.opcode = Opcode::kQuitQ, .opaque = 1}).ok());
  EXPECT_TRUE(client.waitForClose().ok());
}

// INCREMENT, APPEND, DECREMENT and PREPEND with a durability frame are
// SyncWrites: they commit through the simulated replica, and time out with a
// silent one, in both timeout modes.
class ServerMemcachedDurable : public ::testing::TestWithParam<const char*> {};

TEST_P(ServerMemcachedDurable, CountersAndAppendsCanBeSyncWrites) {
  const DurabilitySpec durable{durability::Level::kMajority, 200};
  const std::string acking_replica = R"(, "simulated_replicas": {"replica1": {"ack_delay_ms": 0}})";
  for (const bool silent : {false, true}) {
    SCOPED_TRACE(silent ? "silent replica" : "acking replica");
    ServerProcess server;
    ASSERT_TRUE(
        server.start(testing::silentReplicaConfig(GetParam(), silent ? "" : acking_replica)));
    auto client = server.connect();
    ASSERT_EQ(client.set(0, "n", "1")->status, Status::kSuccess);
    // One durable request on "n", and its answer.
    auto durableCall = [&](Opcode opcode, uint32_t opaque, std::string_view extras,
                           std::string_view value) {
      EXPECT_TRUE(client
                      .send({.opcode = opcode,
                             .opaque = opaque,
                             .durability = durable,
                             .extras = extras,
                             .key = "n",
                             .value = value})
                      .ok());
      auto answer = client.readResponse();
      EXPECT_TRUE(answer.ok()) << answer.status();
      return answer.ok() ? *answer : protocol::Response{};
    };
    const protocol::Response incremented =
        durableCall(Opcode::kIncrement, 5, counterExtras(1, 0, 0), "");
    const protocol::Response appended = durableCall(Opcode::kAppend, 6, "", "0");
    const protocol::Response decremented =
        durableCall(Opcode::kDecrement, 7, counterExtras(5, 0, 0), "");
    const protocol::Response prepended = durableCall(Opcode::kPrepend, 8, "", "9");
    if (silent) {
      EXPECT_EQ(incremented.status, Status::kSyncWriteAmbiguous);
      EXPECT_EQ(appended.status, Status::kSyncWriteAmbiguous);
      EXPECT_EQ(decremented.status, Status::kSyncWriteAmbiguous);
      EXPECT_EQ(prepended.status, Status::kSyncWriteAmbiguous);
      EXPECT_EQ(client.get(0, "n")->value, "1");  // aborted: the old value stays
    } else {
      EXPECT_EQ(incremented.status, Status::kSuccess);
      EXPECT_EQ(protocol::wire::load64(incremented.value, 0), 2u);
      EXPECT_EQ(appended.status, Status::kSuccess);
      EXPECT_EQ(decremented.status, Status::kSuccess);
      EXPECT_EQ(protocol::wire::load64(decremented.value, 0), 15u);  // "20" - 5
      EXPECT_EQ(prepended.status, Status::kSuccess);
      EXPECT_EQ(client.get(0, "n")->value, "915");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothModes, ServerMemcachedDurable,
                         ::testing::Values("event-driven", "polling"), [](const auto& info) {
                           return std::string(info.param) == "polling" ? "Polling" : "EventDriven";
                         });

struct ToolRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

// Runs a shell command line (one of libmemcached's tools), capturing its output.
ToolRun runTool(const std::string& command_line, const std::string& name) {
  const std::string out = ::testing::TempDir() + name + ".out";
  ToolRun run;
  run.status = std::system((command_line + " > " + out + " 2>&1").c_str());
  std::ifstream in(out);
  run.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

std::string servers(const ServerProcess& server) {
  return "--servers=127.0.0.1:" + std::to_string(server.port()) + " --binary";
}

// libmemcached's binary-protocol conformance suite, as a plain memcached
// client runs it: no HELLO, no SASL, no SELECT_BUCKET (Debian's
// libmemcached-tools, which ./dev installs).
TEST(ServerMemcached, MemcapablePassesEveryBinaryTest) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  const ToolRun run =
      runTool("memccapable -b -h 127.0.0.1 -p " + std::to_string(server.port()), "memccapable");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("All tests passed"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
}

// libmemcached's tools round trip: memccp stores a file, memccat reads it
// back (libmemcached reads with GETK), memcstat parses the VERSION answer
// (it refuses a major version of 0) and lists the stats, memcslap's get test
// runs to the end.
TEST(ServerMemcached, LibmemcachedToolsRoundTrip) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kOpenDefaultBucket)));
  const std::string dir = ::testing::TempDir();
  const std::string name = "syncwrite_memccp_" + std::to_string(server.port()) + ".txt";
  std::ofstream(dir + name) << "copied by memccp\n";
  const ToolRun copy =
      runTool("cd " + dir + " && memccp " + servers(server) + " " + name, "memccp");
  ASSERT_EQ(copy.status, 0) << copy.output;
  const ToolRun cat = runTool("memccat " + servers(server) + " " + name, "memccat");
  EXPECT_EQ(cat.status, 0) << cat.output;
  EXPECT_NE(cat.output.find("copied by memccp"), std::string::npos) << cat.output;

  auto client = plainClient(server);
  auto answered = client.version();
  ASSERT_TRUE(answered.ok());
  const ToolRun version = runTool("memcstat " + servers(server) + " --server-version", "version");
  EXPECT_EQ(version.status, 0) << version.output;
  EXPECT_NE(version.output.find(" " + answered->value), std::string::npos) << version.output;
  const ToolRun stats = runTool("memcstat " + servers(server), "memcstat");
  EXPECT_EQ(stats.status, 0) << stats.output;
  EXPECT_NE(stats.output.find("version: syncwrite-server"), std::string::npos) << stats.output;

  const ToolRun slap = runTool(
      "memcslap " + servers(server) + " --test=get --concurrency=2 --execute-number=200", "slap");
  EXPECT_EQ(slap.status, 0) << slap.output;
  EXPECT_NE(slap.output.find("Time to get"), std::string::npos) << slap.output;
}

TEST(ServerMemcached, FlushAnswersPendingSyncWritesThenEmptiesTheBucket) {
  ServerProcess server;
  ASSERT_TRUE(
      server.start(testing::silentReplicaConfig("event-driven", R"(, "flush_enabled": true)")));
  auto client = server.connect();
  ASSERT_EQ(client.set(0, "plain", "v")->status, Status::kSuccess);
  auto waiting = server.connect();
  std::string request;
  protocol::appendStore(request, Opcode::kSet, 7, 1, "durable", "v",
                        {.durability = DurabilitySpec{durability::Level::kMajority, 60000}});
  ASSERT_TRUE(waiting.sendRaw(request).ok());
  ASSERT_TRUE(testing::eventually(
      [&] { return testing::statValue(client, "durability", "sync_writes_in_flight") == 1; }));
  ASSERT_TRUE(client.send({.opcode = Opcode::kFlush, .opaque = 8}).ok());
  auto flushed = client.readResponse();
  ASSERT_TRUE(flushed.ok());
  EXPECT_EQ(flushed->status, Status::kSuccess);
  auto answered = waiting.readResponse();
  ASSERT_TRUE(answered.ok());
  EXPECT_EQ(answered->status, Status::kSyncWriteAmbiguous);
  EXPECT_NE(answered->errorContext().find("flushed"), std::string::npos);
  EXPECT_EQ(client.get(0, "plain")->status, Status::kKeyNotFound);
}

TEST(ServerMemcached, FlushIsRefusedUnlessEnabled) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"default_bucket": "default", "buckets": {"default": {}}})"));
  auto client = plainClient(server);
  ASSERT_EQ(client.set(0, "k", "v")->status, Status::kSuccess);
  ASSERT_TRUE(client.send({.opcode = Opcode::kFlush, .opaque = 8}).ok());
  auto refused = client.readResponse();
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kNotSupported);
  EXPECT_NE(refused->errorContext().find("flush_enabled"), std::string::npos);
  EXPECT_EQ(client.get(0, "k")->status, Status::kSuccess);  // nothing changed
}

}  // namespace
}  // namespace syncwrite::server
