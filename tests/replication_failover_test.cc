// syncwrite-cli failover against three real syncwrite-server processes: the
// active of a vbucket is killed with a SyncWrite in flight that reached only
// one of its two replicas (the other died and restarted empty); the failover promotes that replica
// (the one furthest ahead, as ns_server's find_max_replica), every surviving node learns the chains
// without the dead node, and the write commits on the new chain — never timed out, and nothing a
// client was told committed is lost.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/cli/cli_args.h"
#include "server/cli/cli_run.h"
#include "server/protocol/client.h"
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
using ::testing::HasSubstr;
using testing::ServerProcess;
using testing::statValue;

class ReplicationFailoverTest : public ::testing::Test {
 protected:
  // Three nodes, two replicas: vbucket 0's chain is [n1, n2, n3], 1's
  // [n2, n3, n1], 2's [n3, n1, n2].
  std::string config() const {
    return testing::clusterConfig({&n1_, &n2_, &n3_}, 2, 3, persistent());
  }
  // Couchbase buckets (each node's data beside its port file), whose
  // flushers the persist levels wait for.
  virtual bool persistent() const { return false; }

  void SetUp() override {
    for (ServerProcess* node : {&n1_, &n2_, &n3_}) {
      const std::string name = node == &n1_ ? "n1" : node == &n2_ ? "n2" : "n3";
      ASSERT_TRUE(node->start(config(), {"--node", name}));
    }
    for (ServerProcess* node : {&n1_, &n2_, &n3_}) {
      protocol::Client client = node->connect();
      ASSERT_TRUE(eventually([&] { return statValue(client, "", "replication_streams") == 2; }))
          << node->stderrText();
    }
    cluster_file_ = n1_.portFile().parent_path() / "cluster.json";
    std::ofstream(cluster_file_) << config();
  }

  // syncwrite-cli failover NODE --cluster FILE, in this process.
  int failover(const std::string& node, std::string* out_text, std::string* err_text) const {
    absl::StatusOr<cli::CliArgs> args =
        cli::parseArgs({"failover", node, "--cluster", cluster_file_.string()});
    EXPECT_TRUE(args.ok()) << args.status();
    if (!args.ok()) return -1;
    std::ostringstream out;
    std::ostringstream err;
    const int status = cli::run(*args, out, err, std::chrono::seconds(30));
    *out_text = out.str();
    *err_text = err.str();
    return status;
  }

  static std::string detail(protocol::Client& client, uint16_t vb, const std::string& stat) {
    auto reply = client.stats("vbucket-details " + std::to_string(vb));
    if (!reply.ok() || !reply->ok()) return "";
    return reply->find("vb_" + std::to_string(vb) + stat).value_or("");
  }

  static std::string replicaValue(protocol::Client& client, uint16_t vb, std::string_view key) {
    auto r = call(client, {.opcode = Opcode::kGetReplica, .vbucket = vb, .key = key});
    return r.ok() && r->status == Status::kSuccess ? std::string(r->value) : "";
  }

  // Longer than the replication client's longest reconnect backoff (2 s): a
  // connection torn down meanwhile would have been opened again.
  static constexpr std::chrono::milliseconds kPastTheLongestBackoff{2500};

  ServerProcess n1_;
  ServerProcess n2_;
  ServerProcess n3_;
  std::filesystem::path cluster_file_;
};

class ReplicationFailoverOnDiskTest : public ReplicationFailoverTest {
 protected:
  bool persistent() const override { return true; }
};

TEST_F(ReplicationFailoverOnDiskTest, PromotesTheReplicaFurthestAheadAndItCommitsWhatItHeld) {
  protocol::Client a = n1_.connect();
  protocol::Client b = n2_.connect();
  protocol::Client c = n3_.connect();
  // Committed by a majority before anything fails: it must survive.
  ASSERT_EQ(a.set(0, "committed", "before", durable(10000)).value().status, Status::kSuccess);
  ASSERT_TRUE(eventually([&] { return replicaValue(b, 0, "committed") == "before"; }));
  ASSERT_TRUE(eventually([&] { return replicaValue(c, 0, "committed") == "before"; }));
  // n2 dies; n3 receives the prepare but cannot persist it, so the
  // persist_to_majority write stays pending on n1.
  n2_.signal(SIGKILL);
  EXPECT_EQ(n2_.wait(), -SIGKILL);
  testing::setParam(c, "flusher_paused", "true");
  const int64_t received = statValue(c, "", "replication_items_received");
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{durability::Level::kPersistToMajority, 60000};
  std::string request;
  protocol::appendStore(request, Opcode::kSet, a.nextOpaque(), 0, "pending", "held", options);
  ASSERT_TRUE(a.sendRaw(request).ok());
  ASSERT_TRUE(
      eventually([&] { return statValue(c, "", "replication_items_received") > received; }));
  n1_.signal(SIGKILL);
  EXPECT_EQ(n1_.wait(), -SIGKILL);
  // n2 comes back empty (its disk lost), behind n3.
  std::filesystem::remove(n2_.portFile());
  std::filesystem::remove_all(n2_.portFile().parent_path() / "data");
  ASSERT_TRUE(n2_.start(config(), {"--node", "n2"}));
  b = n2_.connect();

  std::string out;
  std::string err;
  ASSERT_EQ(failover("n1", &out, &err), 0) << err;
  // n3 acked more prepares than n2, which restarted with none.
  EXPECT_THAT(out, HasSubstr("vbucket 0: 'n3' promoted"));
  EXPECT_THAT(out, HasSubstr("vbucket 1: chain [n2, n3, null]"));
  EXPECT_THAT(out, HasSubstr("vbucket 2: chain [n3, n2, null]"));
  // Every surviving node has the new chains.
  for (protocol::Client* client : {&b, &c}) {
    EXPECT_EQ(detail(*client, 0, ":topology"), R"([["n3","n2",null]])");
    EXPECT_EQ(detail(*client, 1, ":topology"), R"([["n2","n3",null]])");
  }
  EXPECT_EQ(detail(c, 0, ""), "active");
  EXPECT_EQ(detail(b, 0, ""), "replica");
  // The inherited prepare waits for the new chain, never for a timeout.
  EXPECT_EQ(c.get(0, "pending").value().status, Status::kSyncWriteReCommitInProgress);
  auto meta = call(c, {.opcode = Opcode::kGetMeta, .vbucket = 0, .key = "pending"});
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->status, Status::kSyncWriteReCommitInProgress);
  testing::setParam(c, "flusher_paused", "false");
  EXPECT_TRUE(eventually([&] {
    auto r = c.get(0, "pending");
    return r.ok() && r->status == Status::kSuccess && r->value == "held";
  })) << n3_.stderrText();
  // n2 caught up from n3, the committed write included.
  EXPECT_TRUE(eventually([&] { return replicaValue(b, 0, "pending") == "held"; }))
      << n2_.stderrText();
  EXPECT_EQ(replicaValue(b, 0, "committed"), "before");
  EXPECT_EQ(statValue(c, "durability", "sync_writes_recommitted"), 1);
  EXPECT_EQ(statValue(c, "durability", "sync_writes_aborted_timeout"), 0);
  auto committed = c.get(0, "committed");
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(committed->value, "before");
  // The new chain takes durable writes: n3 and n2 are its majority.
  auto next = c.set(0, "after", "failover", durable(10000));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->status, Status::kSuccess) << next->errorContext();
}

// A replica ahead of the node promoted instead (n3 holds a write n1 made
// while n2 was down; n2 restarted empty and is made active by hand): the
// new active's failover table does not have the history n3 asks to resume,
// so it answers Rollback to 0; n3 rolls the vbucket back to 0 (what an
// in-memory kv_engine bucket does), streams it again from n2 and acks the
// new chain's writes — and its other stream on that connection goes on.
TEST_F(ReplicationFailoverTest, AReplicaWhoseHistoryDivergedRollsBackAndStreamsAgain) {
  protocol::Client a = n1_.connect();
  protocol::Client c = n3_.connect();
  n2_.signal(SIGKILL);
  EXPECT_EQ(n2_.wait(), -SIGKILL);
  ASSERT_EQ(a.set(0, "only-on-n1-and-n3", "x").value().status, Status::kSuccess);
  ASSERT_TRUE(eventually([&] { return replicaValue(c, 0, "only-on-n1-and-n3") == "x"; }));
  n1_.signal(SIGKILL);
  EXPECT_EQ(n1_.wait(), -SIGKILL);
  std::filesystem::remove(n2_.portFile());
  ASSERT_TRUE(n2_.start(config(), {"--node", "n2"}));
  protocol::Client b = n2_.connect();
  const std::string chain = R"({"topology": [["n2", "n3", null]]})";
  ASSERT_EQ(b.setVbucketState(0, protocol::VbucketState::kActive, chain).value().status,
            Status::kSuccess);
  ASSERT_EQ(c.setVbucketState(0, protocol::VbucketState::kReplica, chain).value().status,
            Status::kSuccess);
  ASSERT_TRUE(eventually([&] { return statValue(c, "", "replication_rollbacks") >= 1; }))
      << n3_.stderrText();
  EXPECT_THAT(n2_.stderrText(), HasSubstr("is not in the failover table"));
  EXPECT_THAT(n3_.stderrText(), HasSubstr("rolled back to seqno 0, 1 item(s) dropped"));
  // What only the old history had is gone from n3; the new chain's durable
  // writes commit with n3's ack (n2 and n3 are its majority).
  auto gone = call(c, {.opcode = Opcode::kGetReplica, .vbucket = 0, .key = "only-on-n1-and-n3"});
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status, Status::kKeyNotFound);
  auto on_new_history = b.set(0, "new-history", "y", durable(10000));
  ASSERT_TRUE(on_new_history.ok()) << on_new_history.status();
  EXPECT_EQ(on_new_history->status, Status::kSuccess) << on_new_history->errorContext();
  EXPECT_TRUE(eventually([&] { return replicaValue(c, 0, "new-history") == "y"; }));
  // n3's stream of vbucket 1 (active on n2) on the same connection went on,
  // and the connection was not torn down and opened again.
  const int64_t connects = statValue(c, "", "replication_connects");
  auto vb1 = b.set(1, "vb1", "still-replicated", durable(10000));
  ASSERT_TRUE(vb1.ok()) << vb1.status();
  EXPECT_EQ(vb1->status, Status::kSuccess) << vb1->errorContext();
  std::this_thread::sleep_for(kPastTheLongestBackoff);
  EXPECT_EQ(statValue(c, "", "replication_connects"), connects) << n3_.stderrText();
}

TEST_F(ReplicationFailoverTest, RefusesWhileASurvivorCannotBeAskedAndChangesNothing) {
  n2_.signal(SIGKILL);
  EXPECT_EQ(n2_.wait(), -SIGKILL);
  std::string out;
  std::string err;
  // n1 is failed over, but n2 does not answer: nothing may be decided.
  EXPECT_EQ(failover("n1", &out, &err), 3);
  EXPECT_THAT(err, HasSubstr("cannot query node 'n2'"));
  protocol::Client c = n3_.connect();
  EXPECT_EQ(detail(c, 0, ":topology"), R"([["n1","n2","n3"]])");
  // A node the cluster does not have.
  EXPECT_EQ(failover("n9", &out, &err), 2);
  EXPECT_THAT(err, HasSubstr("'n9' is not a node of"));
}

}  // namespace
}  // namespace syncwrite::server
