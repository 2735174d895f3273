// Integration tests: what an official Couchbase SDK relies on, against the
// real syncwrite-server — authentication, the error map, the cluster map,
// per-connection HELLO features (UnorderedExecution, MutationSeqno), CAS,
// flags, expiry, GET_META, TOUCH, GAT, and a chain with an undefined replica.
// The Node SDK itself runs against the server in tests/sdk/.
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/protocol/byte_order.h"
#include "server/protocol/feature.h"
#include "server/protocol/request.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Feature;
using protocol::Opcode;
using protocol::Status;
using testing::call;
using testing::durable;
using testing::ServerProcess;
using testing::silentReplicaConfig;

constexpr std::string_view kUsersConfig =
    R"({"users": {"alice": {"password": "s3cret"}}, "buckets": {"default": {}}})";

// A client of the default bucket; unless `ordered`, with UnorderedExecution
// negotiated (throws if the server does not agree).
protocol::Client connectOrdered(const ServerProcess& server, bool ordered) {
  protocol::Client client = server.connect();
  if (ordered) return client;
  const Feature features[] = {Feature::kXerror, Feature::kUnorderedExecution};
  auto agreed = client.hello(features);
  if (!agreed.ok() || agreed->size() != 2) {
    throw std::runtime_error("the server did not agree to UnorderedExecution");
  }
  return client;
}

TEST(ServerBootstrap, CommandsNeedAuthenticationWhenTheServerHasUsers) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kUsersConfig)));
  auto client = server.connectRaw();
  // XERROR: refused, not disconnected (server_fidelity_test.cc has the
  // client without it).
  const Feature xerror[] = {Feature::kXerror};
  ASSERT_TRUE(client.hello(xerror).ok());
  auto selected = client.selectBucket("default");
  ASSERT_TRUE(selected.ok());
  EXPECT_EQ(selected->status, Status::kNoAccess);
  auto mechs = call(client, {.opcode = Opcode::kSaslListMechs});
  ASSERT_TRUE(mechs.ok());
  EXPECT_EQ(mechs->value, "SCRAM-SHA512 SCRAM-SHA256 SCRAM-SHA1 PLAIN");

  auto wrong = client.saslPlain("alice", "guess");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, Status::kAuthError);
  auto unknown = client.saslPlain("mallory", "s3cret");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, Status::kAuthError);
  selected = client.selectBucket("default");
  ASSERT_TRUE(selected.ok());
  EXPECT_EQ(selected->status, Status::kNoAccess);  // still not authenticated

  auto right = client.saslPlain("alice", "s3cret");
  ASSERT_TRUE(right.ok());
  EXPECT_EQ(right->status, Status::kSuccess);
  selected = client.selectBucket("default");
  ASSERT_TRUE(selected.ok());
  EXPECT_EQ(selected->status, Status::kSuccess);
  auto missing = client.selectBucket("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, Status::kKeyNotFound);

  // The connection with bad credentials did not hurt the server.
  auto other = protocol::Client::connectToBucket("127.0.0.1", server.port(), "default", "test",
                                                 {.user = "alice", .password = "s3cret"});
  ASSERT_TRUE(other.ok()) << other.status();
  auto refused = protocol::Client::connectToBucket("127.0.0.1", server.port(), "default", "test",
                                                   {.user = "alice", .password = "nope"});
  EXPECT_TRUE(absl::IsUnauthenticated(refused.status())) << refused.status();
}

TEST(ServerBootstrap, ErrorMapListsEveryStatusWithItsAttributes) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = server.connectRaw();  // GET_ERROR_MAP needs no authentication
  std::string version;
  protocol::wire::append16(version, 2);
  auto map = call(client, {.opcode = Opcode::kGetErrorMap, .value = version});
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->status, Status::kSuccess);
  const auto json = nlohmann::json::parse(map->value);
  EXPECT_EQ(json["version"], 2);
  EXPECT_EQ(json["errors"]["a2"]["name"], "SyncWriteInProgress");
  EXPECT_NE(std::find(json["errors"]["a2"]["attrs"].begin(), json["errors"]["a2"]["attrs"].end(),
                      "retry-later"),
            json["errors"]["a2"]["attrs"].end());
  EXPECT_EQ(json["errors"]["a3"]["name"], "SyncWriteAmbiguous");
  EXPECT_TRUE(json["errors"].contains("0"));
  // Marked JSON only once the connection negotiated it, as kv_engine masks
  // an answer's datatype by the connection's.
  EXPECT_EQ(map->datatype, protocol::kDatatypeRaw);
  const protocol::Feature json_feature[] = {protocol::Feature::kJson};
  ASSERT_TRUE(client.hello(json_feature).ok());
  auto marked = call(client, {.opcode = Opcode::kGetErrorMap, .value = version});
  ASSERT_TRUE(marked.ok());
  EXPECT_EQ(marked->datatype, protocol::kDatatypeJson);
  EXPECT_EQ(marked->value, map->value);
}

TEST(ServerBootstrap, ClusterMapFollowsVbucketStatesAndRidesOnNotMyVbucket) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"buckets": {"default": {"max_vbuckets": 8}}})"));
  auto client = server.connectRaw();
  auto cluster = call(client, {.opcode = Opcode::kGetClusterConfig});
  ASSERT_TRUE(cluster.ok());
  ASSERT_EQ(cluster->status, Status::kSuccess);
  EXPECT_EQ(nlohmann::json::parse(cluster->value)["nodesExt"][0]["services"]["kv"], server.port());
  ASSERT_TRUE(client.selectBucket("default").ok());
  auto before = call(client, {.opcode = Opcode::kGetClusterConfig});
  ASSERT_TRUE(before.ok());
  const auto map = nlohmann::json::parse(before->value);
  EXPECT_EQ(map["name"], "default");
  EXPECT_EQ(map["vBucketServerMap"]["vBucketMap"].size(), 8u);
  EXPECT_EQ(map["vBucketServerMap"]["vBucketMap"][3][0], 0);

  ASSERT_EQ(client.setVbucketState(3, protocol::VbucketState::kReplica)->status, Status::kSuccess);
  auto after = call(client, {.opcode = Opcode::kGetClusterConfig});
  ASSERT_TRUE(after.ok());
  const auto changed = nlohmann::json::parse(after->value);
  EXPECT_GT(changed["rev"], map["rev"]);
  EXPECT_EQ(changed["vBucketServerMap"]["vBucketMap"][3][0], -1);
  auto not_mine = client.get(3, "k");
  ASSERT_TRUE(not_mine.ok());
  EXPECT_EQ(not_mine->status, Status::kNotMyVbucket);
  EXPECT_EQ(nlohmann::json::parse(not_mine->value)["rev"], changed["rev"]);
}

// Without UnorderedExecution a GET waits behind a pending SyncWrite; with it,
// the GET and a plain SET are answered first, and the SyncWrite once.
TEST(ServerBootstrap, UnorderedExecutionAnswersWhatIsDecidedFirst) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  for (const bool unordered : {false, true}) {
    SCOPED_TRACE(unordered ? "unordered" : "ordered");
    auto client = connectOrdered(server, !unordered);
    std::string batch;
    const uint32_t durable_opaque = client.nextOpaque();
    protocol::appendStore(batch, Opcode::kSet, durable_opaque, 1, "waits", "v", durable(300));
    const uint32_t get_opaque = client.nextOpaque();
    protocol::appendGet(batch, get_opaque, 2, "absent");
    const uint32_t set_opaque = client.nextOpaque();
    protocol::appendStore(batch, Opcode::kSet, set_opaque, 2, "plain", "v");
    ASSERT_TRUE(client.sendRaw(batch).ok());
    std::vector<uint32_t> order;
    for (int i = 0; i < 3; ++i) {
      auto answer = client.readResponse();
      ASSERT_TRUE(answer.ok()) << answer.status();
      order.push_back(answer->opaque);
      if (answer->opaque == durable_opaque) {
        EXPECT_EQ(answer->status, Status::kSyncWriteAmbiguous);
      }
    }
    if (unordered) {
      EXPECT_EQ(order, (std::vector<uint32_t>{get_opaque, set_opaque, durable_opaque}));
    } else {
      EXPECT_EQ(order, (std::vector<uint32_t>{durable_opaque, get_opaque, set_opaque}));
    }
    auto noop = client.noop();  // nothing else arrives: each was answered once
    ASSERT_TRUE(noop.ok());
    EXPECT_TRUE(client.takeStrayResponses().empty());
  }
}

// Many SyncWrites resolving in another order than they arrived, mixed with
// writes refused at once: each answer carries its own request's opcode and
// opaque, exactly once, in request order without UnorderedExecution and as
// decided with it. A connection keeps each pending answer's shape (its slot,
// or an index reused once freed) until the write resolves; two rounds reuse
// the indices the first one freed.
TEST(ServerBootstrap, ManySyncWritesAreEachAnsweredOnceWithTheirOwnShape) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  for (const bool unordered : {false, true}) {
    SCOPED_TRACE(unordered ? "unordered" : "ordered");
    auto client = connectOrdered(server, !unordered);
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(round);
      constexpr int kRequests = 40;
      std::string batch;
      std::map<uint32_t, std::pair<Opcode, Status>> expected;  // opaque -> answer
      std::vector<uint32_t> sent;
      for (int i = 0; i < kRequests; ++i) {
        const uint32_t opaque = client.nextOpaque();
        const std::string key = "many-" + std::to_string(round) + "-" + std::to_string(i);
        if (i % 4 == 0) {  // refused at once: the key is absent
          protocol::appendStore(batch, Opcode::kReplace, opaque, 1, key, "v", durable(200));
          expected[opaque] = {Opcode::kReplace, Status::kKeyNotFound};
        } else {  // later requests time out first
          const Opcode opcode = i % 4 == 1 ? Opcode::kAdd : Opcode::kSet;
          protocol::appendStore(batch, opcode, opaque, 1, key, "v",
                                durable(static_cast<uint16_t>(400 - i * 7)));
          expected[opaque] = {opcode, Status::kSyncWriteAmbiguous};
        }
        sent.push_back(opaque);
      }
      ASSERT_TRUE(client.sendRaw(batch).ok());
      std::vector<uint32_t> order;
      for (int i = 0; i < kRequests; ++i) {
        auto answer = client.readResponse();
        ASSERT_TRUE(answer.ok()) << answer.status();
        const auto it = expected.find(answer->opaque);
        ASSERT_NE(it, expected.end()) << "an unknown or repeated opaque " << answer->opaque;
        EXPECT_EQ(answer->opcode, it->second.first) << answer->opaque;
        EXPECT_EQ(answer->status, it->second.second) << answer->opaque;
        expected.erase(it);
        order.push_back(answer->opaque);
      }
      if (unordered) {
        EXPECT_NE(order, sent) << "answered as decided: the refusals first";
        EXPECT_EQ(order.front(), sent.front());
      } else {
        EXPECT_EQ(order, sent);
      }
      auto noop = client.noop();  // nothing else arrives: each was answered once
      ASSERT_TRUE(noop.ok());
      EXPECT_TRUE(client.takeStrayResponses().empty());
    }
  }
}

TEST(ServerBootstrap, MutationSeqnoAddsTheVbucketUuidAndSeqno) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = server.connect();
  auto without = client.set(5, "a", "v");
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(without->extras.empty());
  const Feature features[] = {Feature::kXerror, Feature::kMutationSeqno};
  ASSERT_TRUE(client.hello(features).ok());
  auto first = client.set(5, "a", "v");
  auto second = client.set(5, "b", "v", durable(5000));
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->extras.size(), 16u);
  ASSERT_EQ(second->extras.size(), 16u);
  EXPECT_EQ(first->extras.substr(0, 8), second->extras.substr(0, 8));  // one vbucket, one uuid
  const uint64_t s1 = protocol::wire::load64(first->extras, 8);
  const uint64_t s2 = protocol::wire::load64(second->extras, 8);
  EXPECT_EQ(s1, 2u);  // the plain SET before HELLO was seqno 1
  EXPECT_EQ(s2, 4u);  // prepare 3, commit 4: the commit's seqno

  // GET_META reports the seqno the value was committed at, the same as the
  // mutation answer (kv_engine's committed item carries its commit's seqno).
  for (const auto& [key, seqno] : {std::pair{"a", s1}, std::pair{"b", s2}}) {
    auto meta = call(client, {.opcode = Opcode::kGetMeta, .vbucket = 5, .key = key});
    ASSERT_TRUE(meta.ok());
    ASSERT_EQ(meta->status, Status::kSuccess);
    ASSERT_EQ(meta->extras.size(), 20u);
    EXPECT_EQ(protocol::wire::load64(meta->extras, 12), seqno) << key;
  }
}

TEST(ServerBootstrap, GetMetaTouchGatAndExpiry) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = server.connect();
  ASSERT_EQ(client.set(0, "k", "v", {.flags = 0x01020304})->status, Status::kSuccess);
  auto meta =
      call(client, {.opcode = Opcode::kGetMeta, .extras = std::string(1, '\x02'), .key = "k"});
  ASSERT_TRUE(meta.ok());
  ASSERT_EQ(meta->status, Status::kSuccess);
  ASSERT_EQ(meta->extras.size(), 21u);
  EXPECT_EQ(protocol::wire::load32(meta->extras, 0), 0u);  // not deleted
  EXPECT_EQ(protocol::wire::load32(meta->extras, 4), 0x01020304u);
  auto absent = call(client, {.opcode = Opcode::kGetMeta, .key = "none"});
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->status, Status::kKeyNotFound);

  std::string expiry;
  protocol::wire::append32(expiry, 3600);
  auto touched = call(client, {.opcode = Opcode::kTouch, .extras = expiry, .key = "k"});
  ASSERT_TRUE(touched.ok());
  EXPECT_EQ(touched->status, Status::kSuccess);
  EXPECT_NE(touched->cas, meta->cas);
  auto gat = call(client, {.opcode = Opcode::kGat, .extras = expiry, .key = "k"});
  ASSERT_TRUE(gat.ok());
  ASSERT_EQ(gat->status, Status::kSuccess);
  EXPECT_EQ(gat->value, "v");
  EXPECT_EQ(protocol::wire::load32(gat->extras, 0), 0x01020304u);

  // An absolute expiry in the past: the item is gone for every read, and
  // ADD may take the key again.
  ASSERT_EQ(client.set(0, "old", "v", {.expiry = 30 * 24 * 3600 + 1})->status, Status::kSuccess);
  EXPECT_EQ(client.get(0, "old")->status, Status::kKeyNotFound);
  EXPECT_EQ(client.replace(0, "old", "w")->status, Status::kKeyNotFound);
  EXPECT_EQ(client.add(0, "old", "w")->status, Status::kSuccess);
}

TEST(ServerBootstrap, AnUndefinedReplicaMakesDurabilityImpossible) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"buckets": {"default": {"replicas": [null]}}})"));
  auto client = server.connect();
  auto set = client.set(0, "k", "v", durable(1000));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->status, Status::kDurabilityImpossible);
  EXPECT_EQ(client.set(0, "k", "v")->status, Status::kSuccess);  // plain writes still work
}

}  // namespace
}  // namespace syncwrite::server
