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

using protocol::Opcode;
using protocol::Status;
using testing::durable;
using testing::eventually;
using testing::readAnswer;
using testing::ServerProcess;
using testing::silentReplicaConfig;
using testing::statValue;

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

}  // namespace
}  // namespace syncwrite::server
