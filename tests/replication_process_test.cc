// Two syncwrite-server processes as a cluster: each vbucket's replica is the
// other process, fed over DCP. What a client sees from the outside: a durable
// write commits only once the replica process holds it, the replica holds the
// value (GET_REPLICA), a stopped or killed replica makes SyncWrites time out
// ambiguous, a restarted one catches up and acknowledges again, and a
// document's xattrs travel with it.
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/byte_order.h"
#include "server/protocol/client.h"
#include "server/protocol/feature.h"
#include "server/protocol/request_encoder.h"
#include "server/protocol/response.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Opcode;
using protocol::Status;
using testing::call;
using testing::durable;
using testing::eventually;
using testing::ServerProcess;
using testing::statValue;

// With 4 vbuckets and 2 nodes (n1, n2 by name), vbucket v's chain is
// [n(v%2+1), the other]: vbuckets 0 and 2 are active on n1, 1 and 3 on n2.
constexpr uint16_t kOnN1 = 0;
constexpr uint16_t kOnN2 = 1;

class ReplicationProcessTest : public ::testing::Test {
 protected:
  std::string clusterConfig(bool persistent = false) const {
    return testing::clusterConfig({&n1_, &n2_}, 1, 4, persistent);
  }

  // `persistent`: couchbase buckets, whose flushers the persist levels wait for.
  void startBoth(bool persistent = false) {
    ASSERT_TRUE(n1_.start(clusterConfig(persistent), {"--node", "n1"}));
    ASSERT_TRUE(n2_.start(clusterConfig(persistent), {"--node", "n2"}));
    waitStreaming(n1_);
    waitStreaming(n2_);
  }

  // Each node streams its 2 replica vbuckets from the other.
  static void waitStreaming(ServerProcess& node) {
    protocol::Client client = node.connect();
    ASSERT_TRUE(eventually([&] { return statValue(client, "", "replication_streams") == 2; }))
        << node.stderrText();
  }

  static absl::StatusOr<protocol::Response> getReplica(protocol::Client& client, uint16_t vb,
                                                       std::string_view key) {
    return call(client, {.opcode = Opcode::kGetReplica, .vbucket = vb, .key = key});
  }

  // The replica's copy of `key` once it has it ("" while absent).
  static std::string replicaValue(protocol::Client& client, uint16_t vb, std::string_view key) {
    auto r = getReplica(client, vb, key);
    return r.ok() && r->status == Status::kSuccess ? std::string(r->value) : "";
  }

  ServerProcess n1_;
  ServerProcess n2_;
};

TEST_F(ReplicationProcessTest, ADurableWriteCommitsOnceTheReplicaProcessHoldsIt) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  protocol::Client a = n1_.connect();
  protocol::Client b = n2_.connect();
  auto put = a.set(kOnN1, "k", "v1", durable(10000));
  ASSERT_TRUE(put.ok()) << put.status();
  ASSERT_EQ(put->status, Status::kSuccess) << put->errorContext();
  // Committed means the replica acknowledged the prepare; the commit follows
  // it down the stream.
  EXPECT_GE(statValue(b, "", "replication_acks_sent"), 1);
  EXPECT_TRUE(eventually([&] { return replicaValue(b, kOnN1, "k") == "v1"; }));
  // The active serves the key, the replica does not (it is not active there).
  auto on_replica = b.get(kOnN1, "k");
  ASSERT_TRUE(on_replica.ok());
  EXPECT_EQ(on_replica->status, Status::kNotMyVbucket);
  auto not_replica = getReplica(a, kOnN1, "k");
  ASSERT_TRUE(not_replica.ok());
  EXPECT_EQ(not_replica->status, Status::kNotMyVbucket);
  // The other direction: n2's active vbucket is replicated to n1.
  auto put2 = b.set(kOnN2, "j", "w", durable(10000));
  ASSERT_TRUE(put2.ok()) << put2.status();
  ASSERT_EQ(put2->status, Status::kSuccess) << put2->errorContext();
  EXPECT_TRUE(eventually([&] { return replicaValue(a, kOnN2, "j") == "w"; }));
  // The replica's log has every seqno the active's has: prepares, commits,
  // in order (a plain write too).
  ASSERT_EQ(a.set(kOnN1, "plain", "p").value().status, Status::kSuccess);
  EXPECT_TRUE(eventually([&] { return replicaValue(b, kOnN1, "plain") == "p"; }));
}

TEST_F(ReplicationProcessTest, AStoppedReplicaMakesSyncWritesAmbiguousAndCommitsAgainOnceResumed) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  protocol::Client a = n1_.connect();
  ASSERT_TRUE(n2_.stop());
  auto put = a.set(kOnN1, "k", "v", durable(300));
  n2_.signal(SIGCONT);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->status, Status::kSyncWriteAmbiguous);
  // Aborted: the replica, once it has read the abort, does not hold it.
  protocol::Client b = n2_.connect();
  auto after = a.set(kOnN1, "k2", "v2", durable(10000));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->status, Status::kSuccess) << after->errorContext();
  EXPECT_TRUE(eventually([&] { return replicaValue(b, kOnN1, "k2") == "v2"; }));
  auto aborted = getReplica(b, kOnN1, "k");
  ASSERT_TRUE(aborted.ok());
  EXPECT_EQ(aborted->status, Status::kKeyNotFound);
}

TEST_F(ReplicationProcessTest, AKilledReplicaRestartsEmptyCatchesUpAndAcknowledgesAgain) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  protocol::Client a = n1_.connect();
  ASSERT_EQ(a.set(kOnN1, "before", "1", durable(10000)).value().status, Status::kSuccess);
  n2_.signal(SIGKILL);
  EXPECT_EQ(n2_.wait(), -SIGKILL);
  auto lost = a.set(kOnN1, "while-down", "2", durable(300));
  ASSERT_TRUE(lost.ok()) << lost.status();
  EXPECT_EQ(lost->status, Status::kSyncWriteAmbiguous);
  ASSERT_EQ(a.set(kOnN1, "plain-while-down", "3").value().status, Status::kSuccess);
  // The old port file would send n1 to a port nobody listens on.
  std::filesystem::remove(n2_.portFile());
  ASSERT_TRUE(n2_.start(clusterConfig(), {"--node", "n2"}));
  ASSERT_NO_FATAL_FAILURE(waitStreaming(n2_));
  protocol::Client b = n2_.connect();
  // Everything the active committed, before and while it was down.
  EXPECT_TRUE(eventually([&] { return replicaValue(b, kOnN1, "plain-while-down") == "3"; }));
  EXPECT_EQ(replicaValue(b, kOnN1, "before"), "1");
  EXPECT_EQ(getReplica(b, kOnN1, "while-down").value().status, Status::kKeyNotFound);
  auto again = a.set(kOnN1, "after", "4", durable(10000));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->status, Status::kSuccess) << again->errorContext();
}

// A durable sub-document write with an xattr reaches the replica with its
// datatype: GET_REPLICA answers the body only, and once the replica is
// promoted a sub-document lookup reads the xattr there.
TEST_F(ReplicationProcessTest, XattrsReachTheReplicaWithTheDocument) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  const std::vector<protocol::Feature> features{
      protocol::Feature::kXerror, protocol::Feature::kSelectBucket,
      protocol::Feature::kAltRequestSupport, protocol::Feature::kSyncReplication,
      protocol::Feature::kXattr};
  protocol::Client a = n1_.connect();
  ASSERT_TRUE(a.hello(features).ok());
  // MULTI_MUTATION, Mkdoc: xattr "txn.id" = 7 (XattrPath | MkdirP), body "b" = 1.
  std::string specs;
  const auto spec = [&](uint8_t flags, std::string_view path, std::string_view value) {
    specs.push_back(static_cast<char>(Opcode::kSubdocDictUpsert));
    specs.push_back(static_cast<char>(flags));
    protocol::wire::append16(specs, static_cast<uint16_t>(path.size()));
    protocol::wire::append32(specs, static_cast<uint32_t>(value.size()));
    specs.append(path).append(value);
  };
  spec(0x05, "txn.id", "7");
  spec(0x00, "b", "1");
  protocol::RequestFields fields{
      .opcode = Opcode::kSubdocMultiMutation,
      .vbucket = kOnN1,
      .durability = protocol::DurabilitySpec{durability::Level::kMajority, 10000},
      .extras = "\x01",
      .key = "x",
      .value = specs};
  auto written = call(a, fields);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->status, Status::kSuccess) << written->errorContext();
  protocol::Client b = n2_.connect();
  ASSERT_TRUE(b.hello(features).ok());
  EXPECT_TRUE(eventually([&] { return replicaValue(b, kOnN1, "x") == R"({"b":1})"; }))
      << replicaValue(b, kOnN1, "x");
  n1_.signal(SIGKILL);
  EXPECT_EQ(n1_.wait(), -SIGKILL);
  auto promoted =
      b.setVbucketState(kOnN1, protocol::VbucketState::kActive, R"({"topology": [["n2"]]})");
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  std::string extras;
  protocol::wire::append16(extras, 6);
  extras.push_back(0x04);  // XattrPath
  auto read = call(b, {.opcode = Opcode::kSubdocGet,
                       .vbucket = kOnN1,
                       .extras = extras,
                       .key = "x",
                       .value = "txn.id"});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->status, Status::kSuccess) << read->errorContext();
  EXPECT_EQ(read->value, "7");
}

TEST_F(ReplicationProcessTest, APromotedReplicaReCommitsThePreparesItHeldAndReadsWaitForThem) {
  ASSERT_NO_FATAL_FAILURE(startBoth(true));
  protocol::Client b = n2_.connect();
  // n2 receives the prepare but cannot persist it, so it never acknowledges
  // a persist_to_majority write: n1 holds it pending.
  testing::setParam(b, "flusher_paused", "true");
  protocol::Client a = n1_.connect();
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{durability::Level::kPersistToMajority, 30000};
  std::string request;
  protocol::appendStore(request, Opcode::kSet, a.nextOpaque(), kOnN1, "p", "value", options);
  ASSERT_TRUE(a.sendRaw(request).ok());
  ASSERT_TRUE(eventually([&] { return statValue(b, "", "replication_items_received") >= 1; }));
  // The active dies with the write in flight; n2 is made active for it.
  n1_.signal(SIGKILL);
  EXPECT_EQ(n1_.wait(), -SIGKILL);
  auto promoted =
      b.setVbucketState(kOnN1, protocol::VbucketState::kActive, R"({"topology": [["n2"]]})");
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  ASSERT_EQ(promoted->status, Status::kSuccess) << promoted->errorContext();
  // Until this node has persisted it, the prepare it took over is neither
  // committed nor aborted: a read is told so, a write waits for it.
  auto read = b.get(kOnN1, "p");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->status, Status::kSyncWriteReCommitInProgress);
  EXPECT_EQ(b.set(kOnN1, "p", "other").value().status, Status::kSyncWriteInProgress);
  EXPECT_EQ(statValue(b, "durability", "sync_writes_in_flight"), 1);
  testing::setParam(b, "flusher_paused", "false");
  EXPECT_TRUE(eventually([&] {
    auto r = b.get(kOnN1, "p");
    return r.ok() && r->status == Status::kSuccess && r->value == "value";
  }));
  EXPECT_EQ(statValue(b, "durability", "sync_writes_recommitted"), 1);
  EXPECT_EQ(statValue(b, "durability", "sync_writes_aborted_timeout"), 0);
  EXPECT_NE(n2_.stderrText().find("vbucket 0 promoted to active; it re-commits the 1 prepare(s)"),
            std::string::npos)
      << n2_.stderrText();
}

// Three nodes, two replicas of each vbucket: vbucket 0's chain is [n1, n2, n3].
TEST_F(ReplicationProcessTest, AfterTheActiveDiesTheNewChainReCommitsWhatItsReplicasHeld) {
  ServerProcess n3;
  const std::string config = testing::clusterConfig({&n1_, &n2_, &n3}, 2, 3, true);
  ASSERT_TRUE(n1_.start(config, {"--node", "n1"}));
  ASSERT_TRUE(n2_.start(config, {"--node", "n2"}));
  ASSERT_TRUE(n3.start(config, {"--node", "n3"}));
  for (ServerProcess* node : {&n1_, &n2_, &n3}) ASSERT_NO_FATAL_FAILURE(waitStreaming(*node));
  protocol::Client b = n2_.connect();
  protocol::Client c = n3.connect();
  // Both replicas receive the prepare and neither can persist it: the
  // persist_to_majority write stays pending on n1.
  testing::setParam(b, "flusher_paused", "true");
  testing::setParam(c, "flusher_paused", "true");
  protocol::Client a = n1_.connect();
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{durability::Level::kPersistToMajority, 30000};
  std::string request;
  protocol::appendStore(request, Opcode::kSet, a.nextOpaque(), 0, "p", "held", options);
  ASSERT_TRUE(a.sendRaw(request).ok());
  ASSERT_TRUE(eventually([&] { return statValue(b, "", "replication_items_received") >= 1; }));
  ASSERT_TRUE(eventually([&] { return statValue(c, "", "replication_items_received") >= 1; }));
  n1_.signal(SIGKILL);
  EXPECT_EQ(n1_.wait(), -SIGKILL);
  // The failover: n2 is the new active of [n2, n3]; n3 follows it.
  const std::string chain = R"({"topology": [["n2", "n3"]]})";
  ASSERT_EQ(b.setVbucketState(0, protocol::VbucketState::kActive, chain).value().status,
            Status::kSuccess);
  ASSERT_EQ(c.setVbucketState(0, protocol::VbucketState::kReplica, chain).value().status,
            Status::kSuccess);
  EXPECT_EQ(b.get(0, "p").value().status, Status::kSyncWriteReCommitInProgress);
  // Both persist: n2 for itself, n3 for its ack to n2. The write n1 never
  // committed commits on the new chain; n3 receives the commit.
  testing::setParam(b, "flusher_paused", "false");
  testing::setParam(c, "flusher_paused", "false");
  EXPECT_TRUE(eventually([&] {
    auto r = b.get(0, "p");
    return r.ok() && r->status == Status::kSuccess && r->value == "held";
  }));
  EXPECT_TRUE(eventually([&] { return replicaValue(c, 0, "p") == "held"; })) << n3.stderrText();
  EXPECT_EQ(statValue(b, "durability", "sync_writes_recommitted"), 1);
  // And the new chain takes new durable writes.
  auto next = b.set(0, "after", "failover", durable(10000));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->status, Status::kSuccess) << next->errorContext();
  EXPECT_NE(n3.stderrText().find("vbucket 0 is now replicated from node 'n2'"), std::string::npos)
      << n3.stderrText();
}

TEST_F(ReplicationProcessTest, AVbucketThatLeavesActiveEndsItsStreamWithStateChanged) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  protocol::Client a = n1_.connect();
  protocol::Client b = n2_.connect();
  auto demoted = a.setVbucketState(kOnN1, protocol::VbucketState::kDead);
  ASSERT_TRUE(demoted.ok()) << demoted.status();
  ASSERT_EQ(demoted->status, Status::kSuccess);
  // At once: nothing else is written to wake the producer.
  EXPECT_TRUE(eventually([&] { return statValue(b, "", "replication_streams") == 1; }))
      << n2_.stderrText();
  EXPECT_NE(n2_.stderrText().find("ended the stream of vbucket 0 (reason 2)"), std::string::npos)
      << n2_.stderrText();
  // The other vbucket n1 is active for is still streamed.
  ASSERT_EQ(a.set(2, "still", "w").value().status, Status::kSuccess);
  EXPECT_TRUE(eventually([&] { return replicaValue(b, 2, "still") == "w"; }));
}

TEST_F(ReplicationProcessTest, AnOldActiveMadeReplicaRollsBackWhatOnlyItsOwnHistoryHad) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  protocol::Client a = n1_.connect();
  protocol::Client b = n2_.connect();
  ASSERT_EQ(a.set(kOnN1, "before", "v", durable(10000)).value().status, Status::kSuccess);
  ASSERT_TRUE(eventually([&] { return replicaValue(b, kOnN1, "before") == "v"; }));
  // A partition, as ns_server sees it: n2 is promoted while n1 still takes
  // writes as the active. n2 drops what n1 streams from then on.
  const std::string chain = R"({"topology": [["n2", "n1"]]})";
  ASSERT_EQ(b.setVbucketState(kOnN1, protocol::VbucketState::kActive, chain).value().status,
            Status::kSuccess);
  auto durable_split = a.set(kOnN1, "durable-split", "x", durable(300));
  ASSERT_TRUE(durable_split.ok()) << durable_split.status();
  EXPECT_EQ(durable_split->status, Status::kSyncWriteAmbiguous) << durable_split->errorContext();
  ASSERT_EQ(a.set(kOnN1, "plain-split", "y").value().status, Status::kSuccess);
  // n1 learns the new chain: it streams from n2 with its own history, which
  // n2's failover table does not have past the promotion, and rolls back.
  ASSERT_EQ(a.setVbucketState(kOnN1, protocol::VbucketState::kReplica, chain).value().status,
            Status::kSuccess);
  ASSERT_TRUE(eventually([&] { return statValue(a, "", "replication_rollbacks") >= 1; }))
      << n1_.stderrText() << n2_.stderrText();
  ASSERT_TRUE(eventually([&] { return replicaValue(a, kOnN1, "before") == "v"; }))
      << n1_.stderrText();
  for (const char* key : {"durable-split", "plain-split"}) {
    auto gone = getReplica(a, kOnN1, key);
    ASSERT_TRUE(gone.ok());
    EXPECT_EQ(gone->status, Status::kKeyNotFound) << key;
  }
  // n1 is n2's replica now: its ack commits n2's durable writes.
  auto after = b.set(kOnN1, "after", "z", durable(10000));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->status, Status::kSuccess) << after->errorContext();
  EXPECT_TRUE(eventually([&] { return replicaValue(a, kOnN1, "after") == "z"; }));
}

TEST_F(ReplicationProcessTest, AVbucketMadeActiveWithoutItsChainRefusesSyncWritesUntilOneComes) {
  ASSERT_NO_FATAL_FAILURE(startBoth());
  protocol::Client a = n1_.connect();
  // n1 holds vbucket 1 as n2's replica; made active without a topology, its
  // chain still names n2 as the active.
  ASSERT_EQ(a.setVbucketState(kOnN2, protocol::VbucketState::kActive).value().status,
            Status::kSuccess);
  auto refused = a.set(kOnN2, "d", "1", durable(10000));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->status, Status::kEtmpfail);
  EXPECT_NE(refused->errorContext().find("without a replication topology"), std::string::npos)
      << refused->errorContext();
  EXPECT_EQ(a.set(kOnN2, "p", "2").value().status, Status::kSuccess);
  ASSERT_EQ(a.setVbucketState(kOnN2, protocol::VbucketState::kActive, R"({"topology": [["n1"]]})")
                .value()
                .status,
            Status::kSuccess);
  auto accepted = a.set(kOnN2, "d", "1", durable(10000));
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(accepted->status, Status::kSuccess) << accepted->errorContext();
}

TEST_F(ReplicationProcessTest, AClusterConfigurationNamesWhatIsWrong) {
  // A node name the cluster does not have.
  n1_.spawn(clusterConfig(), {"--node", "n9"});
  EXPECT_EQ(n1_.wait(), 1);
  EXPECT_NE(n1_.stderrText().find("node_name 'n9' is not one of the cluster's nodes"),
            std::string::npos)
      << n1_.stderrText();
}

}  // namespace
}  // namespace syncwrite::server
