// Integration tests: SyncWrites through the real syncwrite-server over TCP —
// committed by a simulated replica or by a replica acking over DCP, answered
// ambiguous at their deadline (both timeout modes), across a live mode switch,
// and when their vbucket leaves active.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/byte_order.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::DurabilitySpec;
using protocol::MutationOptions;
using protocol::Opcode;
using protocol::Status;
using testing::eventually;
using testing::ServerProcess;
using testing::silentReplicaConfig;
using testing::statValue;

MutationOptions durable(std::optional<uint16_t> timeout_ms = std::nullopt) {
  MutationOptions options;
  options.durability = DurabilitySpec{durability::Level::kMajority, timeout_ms};
  return options;
}

// Reads the next answer into `out` and checks that it is `opaque`'s, with
// `status`. Call it under ASSERT_NO_FATAL_FAILURE: a missing answer ends the test.
void readAnswer(protocol::Client& client, uint32_t opaque, Status status,
                protocol::Response* out = nullptr) {
  auto answer = client.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->opaque, opaque);
  EXPECT_EQ(answer->status, status) << "opaque " << opaque;
  if (out != nullptr) *out = *std::move(answer);
}

// Sends `count` durable SETs of distinct keys to `vbucket` in one batch;
// returns their opaques in order.
std::vector<uint32_t> pipelineDurableSets(protocol::Client& client, uint16_t vbucket, int count,
                                          std::optional<uint16_t> timeout_ms) {
  std::string batch;
  std::vector<uint32_t> opaques;
  for (int i = 0; i < count; ++i) {
    const uint32_t opaque = client.nextOpaque();
    opaques.push_back(opaque);
    protocol::appendStore(batch, Opcode::kSet, opaque, vbucket, "key" + std::to_string(i), "v",
                          durable(timeout_ms));
  }
  EXPECT_TRUE(client.sendRaw(batch).ok());
  return opaques;
}

TEST(ServerDurability, CommitsThroughTheSimulatedReplicaOfTheDefaultConfig) {
  ServerProcess server;
  ASSERT_TRUE(server.start());  // the embedded default: replica1 simulated, 1 ms
  auto client = server.connect();

  auto set = client.set(7, "hello", "world", durable());
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->status, Status::kSuccess) << set->errorContext();
  EXPECT_NE(set->cas, 0u);

  auto get = client.get(7, "hello");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, Status::kSuccess);
  EXPECT_EQ(get->value, "world");
  EXPECT_EQ(get->cas, set->cas);

  EXPECT_EQ(statValue(client, "durability", "sync_writes_committed"), 1);
  EXPECT_EQ(statValue(client, "durability", "sync_writes_in_flight"), 0);
}

TEST(ServerDurability, CommitsWhenAnExternalReplicaAcksOverDcp) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = server.connect();
  auto replica = server.connect();
  auto observer = server.connect();

  // Acking is refused before DCP_OPEN, and DCP_OPEN only for a replica.
  ASSERT_TRUE(replica.seqnoAck(3, 1).ok());
  auto refused = replica.readResponse();
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kEinval);
  auto stranger = replica.dcpOpen("nobody");
  ASSERT_TRUE(stranger.ok());
  EXPECT_EQ(stranger->status, Status::kEinval);
  auto opened = replica.dcpOpen("replica1");
  ASSERT_TRUE(opened.ok());
  ASSERT_EQ(opened->status, Status::kSuccess);

  const auto opaques = pipelineDurableSets(writer, 3, 1, std::nullopt);
  ASSERT_TRUE(
      eventually([&] { return statValue(observer, "durability", "sync_writes_in_flight") == 1; }));

  // Seqnos of a vbucket start at 1: the prepare is seqno 1.
  ASSERT_TRUE(replica.seqnoAck(3, 1).ok());
  auto answer = writer.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->opaque, opaques[0]);
  EXPECT_EQ(answer->status, Status::kSuccess) << answer->errorContext();

  // Acks for a vbucket that is not active answer NotMyVbucket (and only then).
  ASSERT_TRUE(writer.setVbucketState(4, protocol::VbucketState::kReplica).ok());
  ASSERT_TRUE(replica.seqnoAck(4, 1).ok());
  auto not_mine = replica.readResponse();
  ASSERT_TRUE(not_mine.ok());
  EXPECT_EQ(not_mine->status, Status::kNotMyVbucket);
  EXPECT_EQ(statValue(observer, "durability", "sync_writes_committed"), 1);
}

// GET_ALL_VB_SEQNOS tells a replica that is not streamed the prepares which
// seqno it may acknowledge: after a durable SET the vbucket's high seqno is
// its prepare, acking exactly that commits it, and the commit moves it on.
TEST(ServerDurability, AllVbSeqnosNameThePrepareAReplicaAcks) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = server.connect();
  auto replica = server.connect();
  ASSERT_EQ(replica.dcpOpen("replica1")->status, Status::kSuccess);

  auto before = replica.allVbSeqnos();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_FALSE(before->empty());
  for (size_t i = 0; i < before->size(); ++i) {
    EXPECT_EQ((*before)[i].vbucket, i) << "every vbucket, in order";
    EXPECT_EQ((*before)[i].seqno, 0u);
  }
  const size_t vbuckets = before->size();

  const auto opaques = pipelineDurableSets(writer, 5, 1, std::nullopt);
  uint64_t prepare = 0;
  ASSERT_TRUE(eventually([&] {
    auto now = replica.allVbSeqnos();
    prepare = now.ok() ? (*now)[5].seqno : 0;
    return prepare != 0;
  }));
  EXPECT_EQ(prepare, 1u);
  ASSERT_TRUE(replica.seqnoAck(5, prepare).ok());
  auto answer = writer.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->opaque, opaques[0]);
  EXPECT_EQ(answer->status, Status::kSuccess) << answer->errorContext();
  EXPECT_EQ((*replica.allVbSeqnos())[5].seqno, 2u) << "the commit";

  // A state filter: 0 is every vbucket not dead; 1..4 one state.
  ASSERT_EQ(writer.setVbucketState(6, protocol::VbucketState::kReplica)->status, Status::kSuccess);
  ASSERT_EQ(writer.setVbucketState(7, protocol::VbucketState::kDead)->status, Status::kSuccess);
  auto replicas = replica.allVbSeqnos(2);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_EQ(*replicas, (std::vector<protocol::VbSeqno>{{6, 0}}));
  auto dead = replica.allVbSeqnos(4);
  ASSERT_TRUE(dead.ok());
  EXPECT_EQ(*dead, (std::vector<protocol::VbSeqno>{{7, 0}}));
  EXPECT_EQ(replica.allVbSeqnos(0)->size(), vbuckets - 1);
  EXPECT_EQ(replica.allVbSeqnos()->size(), vbuckets - 1);
  EXPECT_EQ(replica.allVbSeqnos(1)->size(), vbuckets - 2);

  // An unknown state is refused, and the connection goes on.
  auto refused = replica.allVbSeqnos(5);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("state 5"), std::string::npos) << refused.status();
  EXPECT_TRUE(replica.noop().ok());
}

class ServerTimeoutTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ServerTimeoutTest, AnswersAmbiguousAfterTheRequestedTimeoutWithASilentReplica) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig(GetParam())));
  auto client = server.connect();

  auto set = client.set(1, "k", "v", durable(100));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->status, Status::kSyncWriteAmbiguous);
  EXPECT_NE(set->errorContext().find("timeout"), std::string::npos) << set->errorContext();
  EXPECT_EQ(set->datatype, 0) << "the connection did not negotiate JSON: its error body is raw";

  // A connection that negotiated JSON gets the same body marked JSON.
  auto json_client = server.connect();
  const protocol::Feature with_json[] = {
      protocol::Feature::kXerror, protocol::Feature::kJson, protocol::Feature::kSelectBucket,
      protocol::Feature::kAltRequestSupport, protocol::Feature::kSyncReplication};
  ASSERT_TRUE(json_client.hello(with_json, "syncwrite-test-json").ok());
  auto json_set = json_client.set(2, "k2", "v", durable(100));
  ASSERT_TRUE(json_set.ok()) << json_set.status();
  EXPECT_EQ(json_set->status, Status::kSyncWriteAmbiguous);
  EXPECT_EQ(json_set->datatype, 0x01) << "JSON negotiated: the error body is marked JSON";
  EXPECT_EQ(json_set->errorContext(), set->errorContext());

  auto get = client.get(1, "k");  // aborted: never visible
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, Status::kKeyNotFound);
  EXPECT_EQ(statValue(client, "durability", "sync_writes_aborted_timeout"), 2);
  auto mode = client.stats("durability");
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(mode->find("durability_mode"), GetParam());
}

INSTANTIATE_TEST_SUITE_P(BothModes, ServerTimeoutTest,
                         ::testing::Values("event-driven", "polling"));

TEST(ServerDurability, SetParamSwitchesTheModeWhileWritesAreInFlight) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = server.connect();
  auto admin = server.connect();

  constexpr int kWrites = 40;
  const auto opaques = pipelineDurableSets(writer, 9, kWrites, 300);
  ASSERT_TRUE(eventually(
      [&] { return statValue(admin, "durability", "sync_writes_in_flight") == kWrites; }));
  for (const char* mode : {"polling", "event-driven", "polling"}) {
    auto switched = admin.setParam(protocol::ParamType::kFlush, "durability_timeout_mode", mode);
    ASSERT_TRUE(switched.ok());
    EXPECT_EQ(switched->status, Status::kSuccess) << switched->errorContext();
  }

  // Each write answered exactly once, in request order, at its deadline.
  for (int i = 0; i < kWrites; ++i) {
    auto answer = writer.readResponse();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->opaque, opaques[i]);
    EXPECT_EQ(answer->status, Status::kSyncWriteAmbiguous);
  }
  auto noop = writer.noop();  // nothing else was queued before it
  ASSERT_TRUE(noop.ok());
  EXPECT_TRUE(writer.takeStrayResponses().empty());
  EXPECT_EQ(statValue(admin, "durability", "sync_writes_aborted_timeout"), kWrites);
  EXPECT_EQ(statValue(admin, "durability", "timeout_mode_switches"), 3);
  EXPECT_NE(server.stderrText().find("durability_timeout_mode switched to polling"),
            std::string::npos);

  // A refused change answers Einval with the config layer's message.
  auto refused = admin.setParam(protocol::ParamType::kConfig, "durability_timeout_mode", "lazy");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kEinval);
  EXPECT_NE(refused->errorContext().find("durability_timeout_mode"), std::string::npos);
  auto mode = admin.stats("tasks");
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(mode->find("default:timeout_mode"), "polling");
}

// SET_PARAM names a key from the wire: each refusal answers Einval with the
// key, the value and what was expected, and the bucket's configuration is
// exactly as before.
TEST(ServerDurability, SetParamRefusalsNameKeyValueAndExpectationAndChangeNothing) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto admin = server.connect();
  const auto before = admin.stats("config");
  ASSERT_TRUE(before.ok() && before->ok());
  ASSERT_EQ(before->find("durability_timeout_task_interval"), "5");

  struct Case {
    const char* key;
    const char* value;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"durability_timeout_mode", "lazy",
            "durability_timeout_mode: \"lazy\" is not valid, expected one of event-driven, "
            "polling"},
           {"durability_timeout_task_interval", "0",
            "durability_timeout_task_interval: 0 is out of range, expected an unsigned integer in "
            "1..60000 (milliseconds)"},
           {"durability_default_timeout", "soon",
            "durability_default_timeout: \"soon\" is not valid, expected an unsigned integer"},
           {"durability_min_level", "Majority",
            "durability_min_level: \"Majority\" is not valid, expected one of none, majority"},
           {"durability_timeout_mdoe", "polling",
            "unknown configuration key \"durability_timeout_mdoe\""},
           {"max_vbuckets", "8", "max_vbuckets cannot be changed at runtime"},
           {"num_nonio_threads", "2", "num_nonio_threads is a server key, not a bucket key"},
           // Bytes that are not UTF-8 ended the process (std::terminate) before
           // tests/fuzz/config_fuzz.cc found it; they are shown as U+FFFD.
           {"durability_timeout_task_interval", "\xff",
            "durability_timeout_task_interval: \"\xef\xbf\xbd\" is not valid"},
           {"simulated_replicas_paused", "\xff",
            "simulated_replicas_paused: \"\xef\xbf\xbd\" is not valid UTF-8"},
       }) {
    auto refused = admin.setParam(protocol::ParamType::kConfig, c.key, c.value);
    ASSERT_TRUE(refused.ok()) << refused.status();
    EXPECT_EQ(refused->status, Status::kEinval) << c.key;
    EXPECT_NE(refused->errorContext().find(c.message), std::string::npos)
        << c.key << "=" << c.value << " -> " << refused->errorContext();
  }
  const auto after = admin.stats("config");
  ASSERT_TRUE(after.ok() && after->ok());
  EXPECT_EQ(after->stats, before->stats);
  EXPECT_EQ(statValue(admin, "durability", "timeout_mode_switches"), 0);
}

TEST(ServerDurability, SetVbucketToReplicaAnswersItsInFlightWritesAmbiguous) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = server.connect();
  auto admin = server.connect();

  const auto opaques = pipelineDurableSets(writer, 5, 3, 60000);
  ASSERT_TRUE(
      eventually([&] { return statValue(admin, "durability", "sync_writes_in_flight") == 3; }));
  auto changed = admin.setVbucketState(5, protocol::VbucketState::kReplica);
  ASSERT_TRUE(changed.ok());
  ASSERT_EQ(changed->status, Status::kSuccess);

  for (uint32_t opaque : opaques) {
    protocol::Response answer;
    ASSERT_NO_FATAL_FAILURE(readAnswer(writer, opaque, Status::kSyncWriteAmbiguous, &answer));
    EXPECT_NE(answer.errorContext().find("left_active"), std::string::npos);
  }
  auto refused = writer.set(5, "k", "v");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kNotMyVbucket);
  auto get = writer.get(5, "k");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, Status::kNotMyVbucket);

  ASSERT_TRUE(admin.setVbucketState(5, protocol::VbucketState::kActive).ok());
  auto plain = writer.set(5, "k", "v");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, Status::kSuccess);
  EXPECT_EQ(statValue(admin, "durability", "sync_writes_ambiguous_other"), 3);
}

// In one batch: a GET answered at once, a durable SET that waits (silent
// replica, 300 ms), a plain SET and a NOOP behind it. The first answer leaves
// without waiting for the SyncWrite; the two behind it wait for it, and all
// four come in request order, the SyncWrite's as SyncWriteAmbiguous.
TEST(ServerDurability, AnswersBeforeAPendingSyncWriteLeaveAndThoseBehindItWait) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto client = server.connect();
  std::string batch;
  const uint32_t get = client.nextOpaque();
  protocol::appendGet(batch, get, 2, "absent");
  const uint32_t durable_set = client.nextOpaque();
  protocol::appendStore(batch, Opcode::kSet, durable_set, 2, "waits", "v", durable(300));
  const uint32_t plain_set = client.nextOpaque();
  protocol::appendStore(batch, Opcode::kSet, plain_set, 3, "behind", "v");
  const uint32_t noop = client.nextOpaque();
  protocol::appendSimple(batch, Opcode::kNoop, noop);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(client.sendRaw(batch).ok());

  ASSERT_NO_FATAL_FAILURE(readAnswer(client, get, Status::kKeyNotFound));
  // Not held for the SyncWrite behind it, whose timeout is 300 ms.
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(300));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, durable_set, Status::kSyncWriteAmbiguous));
  EXPECT_GE(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(300));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, plain_set, Status::kSuccess));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, noop, Status::kSuccess));
}

// Answers of every kind behind pending SyncWrites, in one batch, with a
// replica that acks after 100 ms: a durable SET, a GET answered at once, a
// durable INCREMENT (its answer, a counter besides a CAS, is built when it
// resolves and kept outside its slot), a plain SET, a durable DELETE, a
// NOOP. All six arrive in request order, each with its own answer.
TEST(ServerDurability, AnswersOfEveryKindBehindPendingSyncWritesKeepRequestOrder) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig(
      "event-driven", R"(, "simulated_replicas": {"replica1": {"ack_delay_ms": 100}})")));
  auto client = server.connect();
  ASSERT_EQ(client.set(4, "n", "41")->status, Status::kSuccess);
  ASSERT_EQ(client.set(4, "gone", "v")->status, Status::kSuccess);
  std::string batch;
  std::vector<std::pair<uint32_t, Status>> expected;
  auto expect = [&](Status status) {
    const uint32_t opaque = client.nextOpaque();
    expected.emplace_back(opaque, status);
    return opaque;
  };
  protocol::appendStore(batch, Opcode::kSet, expect(Status::kSuccess), 4, "a", "v", durable());
  protocol::appendGet(batch, expect(Status::kKeyNotFound), 4, "absent");
  std::string extras;
  protocol::wire::append64(extras, 1);  // delta
  protocol::wire::append64(extras, 0);  // initial
  protocol::wire::append32(extras, 0);  // expiry
  const uint32_t increment = expect(Status::kSuccess);
  protocol::appendRequest(batch, {.opcode = Opcode::kIncrement,
                                  .opaque = increment,
                                  .vbucket = 4,
                                  .durability = DurabilitySpec{durability::Level::kMajority, {}},
                                  .extras = extras,
                                  .key = "n"});
  protocol::appendStore(batch, Opcode::kSet, expect(Status::kSuccess), 4, "plain", "v");
  protocol::appendDelete(batch, expect(Status::kSuccess), 4, "gone", durable());
  protocol::appendSimple(batch, Opcode::kNoop, expect(Status::kSuccess));
  ASSERT_TRUE(client.sendRaw(batch).ok());
  for (const auto& [opaque, status] : expected) {
    protocol::Response answer;
    ASSERT_NO_FATAL_FAILURE(readAnswer(client, opaque, status, &answer));
    if (opaque == increment) {
      EXPECT_EQ(protocol::wire::load64(answer.value, 0), 42u);
    }
  }
  EXPECT_EQ(client.get(4, "n")->value, "42");
  EXPECT_EQ(client.get(4, "gone")->status, Status::kKeyNotFound);
}

// Two SyncWrites that time out 300 ms apart (silent replica), each with
// answers behind it: [durable SET 100 ms, GET of a 4 KiB value, durable SET
// 400 ms, NOOP]. The first timeout releases its answer and the GET's, whose
// bytes leave the connection's buffer of answers behind a pending one while
// the NOOP's stay; the second releases the rest. Each answer is whole and in
// request order.
TEST(ServerDurability, AnswersBehindSyncWritesThatResolveApartLeaveWithEach) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto client = server.connect();
  const std::string big(4096, 'b');
  ASSERT_EQ(client.set(6, "big", big)->status, Status::kSuccess);
  std::string batch;
  const uint32_t first = client.nextOpaque();
  protocol::appendStore(batch, Opcode::kSet, first, 6, "first", "v", durable(100));
  const uint32_t get = client.nextOpaque();
  protocol::appendGet(batch, get, 6, "big");
  const uint32_t second = client.nextOpaque();
  protocol::appendStore(batch, Opcode::kSet, second, 6, "second", "v", durable(400));
  const uint32_t noop = client.nextOpaque();
  protocol::appendSimple(batch, Opcode::kNoop, noop);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(client.sendRaw(batch).ok());

  ASSERT_NO_FATAL_FAILURE(readAnswer(client, first, Status::kSyncWriteAmbiguous));
  protocol::Response got;
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, get, Status::kSuccess, &got));
  EXPECT_EQ(got.value, big);
  // The GET's answer came with the first timeout, not held for the second.
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(400));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, second, Status::kSyncWriteAmbiguous));
  EXPECT_GE(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(400));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, noop, Status::kSuccess));
}

// Unordered: a SyncWrite resolved before a request executes is answered
// first (server/connection.h, "Late answers"). Every connection here shares
// one I/O thread, so the ack's handler commits A and hands its answer to the
// writer's inbox before or after C (a plain SET of A's key) executes, never
// in between: C is either refused SyncWriteInProgress (it ran first) or
// succeeds, and then A's answer must come first. The same ack commits a
// SyncWrite of each of two other connections first, whose drains fill the
// thread's drain queue (two at a time), so A's drain waits there; a busy
// connection makes the ack and C likely to be read in one batch, C's read
// queued ahead of A's drain. Without the turn answering its inbox first, C's
// answer left before A's.
TEST(ServerDurability, UnorderedAnswersASyncWriteResolvedBeforeTheNextRequestFirst) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto admin = server.connect();
  const auto open_on = [&](int thread) {
    return statValue(admin, "", "mcbp_io" + std::to_string(thread) + "_connections");
  };
  ASSERT_TRUE(eventually([&] { return open_on(0) + open_on(1) == 1; }));
  // Connects until a connection lands on I/O thread 0 (the fewest-open rule
  // alternates them); the others stay open.
  std::vector<protocol::Client> elsewhere;
  const auto connect_on_0 = [&] {
    for (;;) {
      const int64_t before = open_on(0);
      auto client = server.connect();
      if (open_on(0) > before) return client;
      elsewhere.push_back(std::move(client));
    }
  };
  auto writer = connect_on_0();
  auto other1 = connect_on_0();
  auto other2 = connect_on_0();
  auto replica = connect_on_0();
  auto busy = connect_on_0();
  const protocol::Feature unordered[] = {protocol::Feature::kUnorderedExecution};
  for (protocol::Client* client : {&writer, &other1, &other2}) {
    ASSERT_TRUE(client->hello(unordered).ok());
  }
  auto opened = replica.dcpOpen("replica1");
  ASSERT_TRUE(opened.ok());
  ASSERT_EQ(opened->status, Status::kSuccess);

  constexpr uint16_t kVb = 5;
  constexpr int kRounds = 100;
  constexpr int kBusyGets = 400;
  std::string gets;
  for (int i = 0; i < kBusyGets; ++i) protocol::appendGet(gets, 0, kVb, "absent");
  // A durable SET, then a NOOP: once the NOOP is answered, the SET is
  // pending (executed, not resolved). Returns the SET's opaque.
  const auto pendingSet = [](protocol::Client& client, const std::string& key) {
    std::string batch;
    const uint32_t set = client.nextOpaque();
    protocol::appendStore(batch, Opcode::kSet, set, kVb, key, "v", durable(10'000));
    const uint32_t noop = client.nextOpaque();
    protocol::appendSimple(batch, Opcode::kNoop, noop);
    EXPECT_TRUE(client.sendRaw(batch).ok());
    readAnswer(client, noop, Status::kSuccess);
    return set;
  };
  uint64_t high_seqno = 0;
  int c_succeeded = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = "ordered-" + std::to_string(round);
    const uint32_t o1 = pendingSet(other1, "other1-" + std::to_string(round));
    const uint32_t o2 = pendingSet(other2, "other2-" + std::to_string(round));
    const uint32_t a = pendingSet(writer, key);
    ASSERT_FALSE(HasFatalFailure());

    ASSERT_TRUE(busy.sendRaw(gets).ok());
    ASSERT_TRUE(replica.seqnoAck(kVb, high_seqno + 3).ok());  // the three prepares
    std::string c_request;
    const uint32_t c = writer.nextOpaque();
    protocol::appendStore(c_request, Opcode::kSet, c, kVb, key, "c");
    ASSERT_TRUE(writer.sendRaw(c_request).ok());

    auto first = writer.readResponse();
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = writer.readResponse();
    ASSERT_TRUE(second.ok()) << second.status();
    const protocol::Response& c_answer = first->opaque == c ? *first : *second;
    const protocol::Response& a_answer = first->opaque == c ? *second : *first;
    ASSERT_EQ(a_answer.opaque, a);
    ASSERT_EQ(a_answer.status, Status::kSuccess) << a_answer.errorContext();
    high_seqno += 6;  // three prepares, three commits
    if (c_answer.status == Status::kSuccess) {
      ++c_succeeded;
      ++high_seqno;
      EXPECT_EQ(first->opaque, a) << "round " << round << ": C, executed after A committed, "
                                  << "was answered before A";
    } else {
      EXPECT_EQ(c_answer.status, Status::kSyncWriteInProgress) << c_answer.errorContext();
    }
    ASSERT_NO_FATAL_FAILURE(readAnswer(other1, o1, Status::kSuccess));
    ASSERT_NO_FATAL_FAILURE(readAnswer(other2, o2, Status::kSuccess));
    for (int i = 0; i < kBusyGets; ++i) ASSERT_TRUE(busy.readResponse().ok());
  }
  RecordProperty("c_succeeded", c_succeeded);
  EXPECT_GT(c_succeeded, 0) << "C never executed after the ack: the test tested nothing";
}

// More quiet SyncWrites in flight than a connection takes (1,100 durable
// SETQs against its bound of 1,024), then a NOOP, in one batch. The replica
// is the test's DCP connection, so the test sees reading stop at the bound
// (exactly 1,024 in flight) before it acknowledges anything. The commits
// answer nothing (quiet), so popping their slots starts no write, and no
// write's end resumes the read: before resumeReadIfPaused() the NOOP was
// never answered and the last 76 SETQs never executed. The acks come in
// steps of 16, so a turn can also stop at the bound again with requests
// still buffered (unordered: after taking answers from the inbox, which its
// flush then frees room for). Ordered, then unordered.
TEST(ServerDurability, QuietSyncWritesPastTheInFlightBoundDoNotStallTheConnection) {
  constexpr int kWrites = 1100;
  constexpr int kBound = 1024;  // Connection::kMaxSlots
  constexpr uint16_t kVb = 9;
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto replica = server.connect();
  auto opened = replica.dcpOpen("replica1");
  ASSERT_TRUE(opened.ok());
  ASSERT_EQ(opened->status, Status::kSuccess);
  auto admin = server.connect();
  const auto in_flight = [&] { return statValue(admin, "durability", "sync_writes_in_flight"); };
  const auto committed = [&] { return statValue(admin, "durability", "sync_writes_committed"); };
  const auto high_seqno = [&] {
    auto seqnos = admin.allVbSeqnos();
    EXPECT_TRUE(seqnos.ok()) << seqnos.status();
    for (const protocol::VbSeqno& v : seqnos.value_or(std::vector<protocol::VbSeqno>{})) {
      if (v.vbucket == kVb) return v.seqno;
    }
    ADD_FAILURE() << "no seqno for vbucket " << kVb;
    return uint64_t{0};
  };
  for (const bool unordered : {false, true}) {
    SCOPED_TRACE(unordered ? "unordered" : "ordered");
    auto client = server.connect();
    if (unordered) {
      const protocol::Feature features[] = {protocol::Feature::kUnorderedExecution};
      ASSERT_TRUE(client.hello(features).ok());
    }
    const std::string prefix = unordered ? "u" : "o";
    const int64_t committed_at_start = committed();
    std::string batch;
    for (int i = 0; i < kWrites; ++i) {
      protocol::appendStore(batch, Opcode::kSetQ, client.nextOpaque(), kVb,
                            prefix + std::to_string(i), "v", durable(30'000));
    }
    const uint32_t noop = client.nextOpaque();
    protocol::appendSimple(batch, Opcode::kNoop, noop);
    ASSERT_TRUE(client.sendRaw(batch).ok());
    ASSERT_TRUE(eventually([&] { return in_flight() == kBound; })) << "stopped at the bound";
    // The last kBound seqnos are the pending prepares: acknowledge them 16 at a time.
    const uint64_t first = high_seqno() - kBound + 1;
    for (uint64_t acked = first + 15; acked < first + kBound; acked += 16) {
      ASSERT_TRUE(replica.seqnoAck(kVb, acked).ok());
    }
    // Then what is left, as the requests behind the bound execute, until every
    // write of this connection has committed (a connection that stopped
    // executing them never gets there).
    ASSERT_TRUE(eventually([&] {
      EXPECT_TRUE(replica.seqnoAck(kVb, high_seqno()).ok());
      return committed() == committed_at_start + kWrites;
    })) << "the requests behind the bound were never executed";
    // Nothing but the NOOP's answer: every SETQ succeeded, so none answers.
    ASSERT_NO_FATAL_FAILURE(readAnswer(client, noop, Status::kSuccess));
    EXPECT_EQ(in_flight(), 0);
    for (int i = 0; i < kWrites; ++i) {
      auto get = client.get(kVb, prefix + std::to_string(i));
      ASSERT_TRUE(get.ok()) << get.status();
      ASSERT_EQ(get->status, Status::kSuccess) << prefix << i << ": " << get->errorContext();
    }
  }
  EXPECT_TRUE(replica.takeStrayResponses().empty()) << "an ack was refused";
}

// UnorderedExecution turned off in the middle of a batch: [NOOP, HELLO
// without it, NOOP]. The first two execute unordered, the third ordered, in
// one turn. Answers keep request order across the switch, as the HELLO's
// effect on every request after it promises (server/connection.h): the last
// NOOP's answer used to leave first, ahead of the answers decided before it.
TEST(ServerDurability, AnswersKeepRequestOrderWhenUnorderedExecutionIsTurnedOff) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto client = server.connect();
  const protocol::Feature unordered[] = {protocol::Feature::kUnorderedExecution};
  ASSERT_TRUE(client.hello(unordered).ok());
  std::string batch;
  const uint32_t first = client.nextOpaque();
  protocol::appendSimple(batch, Opcode::kNoop, first);
  const uint32_t hello = client.nextOpaque();
  protocol::appendHello(batch, hello, "ordered-again", {});
  const uint32_t last = client.nextOpaque();
  protocol::appendSimple(batch, Opcode::kNoop, last);
  ASSERT_TRUE(client.sendRaw(batch).ok());
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, first, Status::kSuccess));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, hello, Status::kSuccess));
  ASSERT_NO_FATAL_FAILURE(readAnswer(client, last, Status::kSuccess));
}

}  // namespace
}  // namespace syncwrite::server
