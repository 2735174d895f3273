// A couchbase (persistent) bucket from the outside: what was acknowledged
// at a persist level survives SIGKILL of the server; a prepare that was on
// disk but not committed comes back as one that re-commits (reads answer
// SyncWriteReCommitInProgress until its chain acknowledges it again); an
// aborted one never comes back; the data directory is held by one server at
// a time; a couchbase bucket without data_dir is refused naming the key.
#include <signal.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "server/protocol/client.h"
#include "server/protocol/request_encoder.h"
#include "server/protocol/response.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Opcode;
using protocol::Status;
using testing::call;
using testing::eventually;
using testing::ServerProcess;
using testing::statValue;

// One couchbase bucket of 4 vbuckets whose one replica is simulated;
// `bucket_extra` adds keys to the bucket ("" or "\"key\": value, ").
std::string persistentConfig(const std::filesystem::path& data_dir,
                             const std::string& bucket_extra = "") {
  return R"({"data_dir": ")" + data_dir.string() + R"(", "buckets": {"default": {)" + bucket_extra +
         R"("bucket_type": "couchbase", "max_vbuckets": 4, "replicas": ["replica1"],
             "simulated_replicas": {"replica1": {"ack_delay_ms": 1}}}}})";
}

protocol::MutationOptions atLevel(durability::Level level, uint16_t timeout_ms = 10000) {
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{level, timeout_ms};
  return options;
}

class PersistenceTest : public ::testing::Test {
 protected:
  std::filesystem::path dataDir() const { return server_.portFile().parent_path() / "data"; }

  // SIGKILL, then the same configuration again on the same data directory.
  void killAndRestart(const std::string& config) {
    server_.signal(SIGKILL);
    ASSERT_EQ(server_.wait(), -SIGKILL);
    std::filesystem::remove(server_.portFile());
    ASSERT_TRUE(server_.start(config));
  }

  static std::string valueOf(protocol::Client& client, std::string_view key) {
    auto r = client.get(0, key);
    if (!r.ok()) return "<" + std::string(r.status().message()) + ">";
    if (r->status != Status::kSuccess) return "<status " + std::to_string(int(r->status)) + ">";
    return std::string(r->value);
  }

  ServerProcess server_;
};

TEST_F(PersistenceTest, WritesAcknowledgedAtPersistLevelsSurviveSigkill) {
  const std::string config = persistentConfig(dataDir());
  ASSERT_TRUE(server_.start(config));
  {
    protocol::Client c = server_.connect();
    auto ptm = c.set(0, "ptm", "v-ptm", atLevel(durability::Level::kPersistToMajority));
    ASSERT_TRUE(ptm.ok()) << ptm.status();
    ASSERT_EQ(ptm->status, Status::kSuccess) << ptm->errorContext();
    auto mpm = c.set(1, "mpm", "v-mpm", atLevel(durability::Level::kMajorityAndPersistOnMaster));
    ASSERT_TRUE(mpm.ok());
    ASSERT_EQ(mpm->status, Status::kSuccess) << mpm->errorContext();
    ASSERT_EQ(c.set(0, "gone", "x").value().status, Status::kSuccess);
    ASSERT_EQ(c.set(0, "plain", "v-plain").value().status, Status::kSuccess);
    auto removed = call(c, {.opcode = Opcode::kDelete, .vbucket = 0, .key = "gone"});
    ASSERT_TRUE(removed.ok());
    ASSERT_EQ(removed->status, Status::kSuccess);
    // Once the flusher has read everything, plain writes are on disk too.
    ASSERT_TRUE(eventually([&] { return statValue(c, "memory", "flusher_items_queued") == 0; }));
  }
  ASSERT_NO_FATAL_FAILURE(killAndRestart(config));
  protocol::Client c = server_.connect();
  EXPECT_EQ(valueOf(c, "ptm"), "v-ptm");
  auto mpm = c.get(1, "mpm");
  ASSERT_TRUE(mpm.ok());
  EXPECT_EQ(mpm->value, "v-mpm");
  EXPECT_EQ(valueOf(c, "plain"), "v-plain");
  EXPECT_EQ(statValue(c, "warmup", "ep_warmup_key_count"), 3);
  EXPECT_EQ(statValue(c, "warmup", "ep_warmup_vbuckets"), 2);
  EXPECT_EQ(c.get(0, "gone").value().status, Status::kKeyNotFound);
  EXPECT_NE(server_.stderrText().find("warmup from " + (dataDir() / "default").string() +
                                      " done: 2 vbuckets, 3 documents, 0 outstanding prepares"),
            std::string::npos)
      << server_.stderrText();
  // New writes are numbered after what was stored: nothing is overwritten
  // on disk by a reused seqno, and a second restart keeps both.
  ASSERT_EQ(
      c.set(0, "after", "v-after", atLevel(durability::Level::kPersistToMajority)).value().status,
      Status::kSuccess);
  ASSERT_NO_FATAL_FAILURE(killAndRestart(config));
  protocol::Client again = server_.connect();
  EXPECT_EQ(valueOf(again, "ptm"), "v-ptm");
  EXPECT_EQ(valueOf(again, "after"), "v-after");
}

TEST_F(PersistenceTest, AnOutstandingPrepareComesBackAndReCommitsAnAbortedOneDoesNot) {
  // The replica holds its acks: SyncWrites stay pending.
  const std::string paused = persistentConfig(dataDir(), R"("simulated_replicas_paused": "*", )");
  ASSERT_TRUE(server_.start(paused));
  {
    protocol::Client c = server_.connect();
    // Times out and is aborted: its abort reaches the disk.
    auto aborted = c.set(0, "aborted", "never", atLevel(durability::Level::kMajority, 100));
    ASSERT_TRUE(aborted.ok());
    ASSERT_EQ(aborted->status, Status::kSyncWriteAmbiguous);
    // Stays pending: its prepare reaches the disk, nothing resolves it.
    std::string request;
    protocol::appendStore(request, Opcode::kSet, c.nextOpaque(), 0, "pending", "v-pending",
                          atLevel(durability::Level::kMajority, 60000));
    ASSERT_TRUE(c.sendRaw(request).ok());
    // Another connection: this one's answers wait behind the pending write.
    protocol::Client watcher = server_.connect();
    ASSERT_TRUE(eventually([&] {
      return statValue(watcher, "durability", "sync_writes_in_flight") == 1 &&
             statValue(watcher, "memory", "flusher_items_queued") == 0;
    }));
  }
  ASSERT_NO_FATAL_FAILURE(killAndRestart(paused));
  protocol::Client c = server_.connect();
  EXPECT_NE(server_.stderrText().find("1 outstanding prepares"), std::string::npos)
      << server_.stderrText();
  EXPECT_EQ(c.get(0, "pending").value().status, Status::kSyncWriteReCommitInProgress);
  EXPECT_EQ(c.get(0, "aborted").value().status, Status::kKeyNotFound);
  EXPECT_EQ(statValue(c, "warmup", "ep_warmup_outstanding_prepares"), 1);
  EXPECT_EQ(statValue(c, "warmup", "ep_warmup_key_count"), 0);
  EXPECT_EQ(statValue(c, "durability", "sync_writes_in_flight"), 1);
  // It has no deadline now: only its chain's ack resolves it.
  testing::setParam(c, "simulated_replicas_paused", "");
  EXPECT_TRUE(eventually([&] { return valueOf(c, "pending") == "v-pending"; }));
  EXPECT_EQ(statValue(c, "durability", "sync_writes_recommitted"), 1);
  EXPECT_EQ(statValue(c, "durability", "sync_writes_aborted_timeout"), 0);
  // The commit is on disk: after another SIGKILL the value is committed.
  ASSERT_TRUE(eventually([&] { return statValue(c, "memory", "flusher_items_queued") == 0; }));
  ASSERT_NO_FATAL_FAILURE(killAndRestart(paused));
  protocol::Client after = server_.connect();
  EXPECT_EQ(valueOf(after, "pending"), "v-pending");
  EXPECT_EQ(statValue(after, "durability", "sync_writes_in_flight"), 0);
}

TEST_F(PersistenceTest, ASecondServerOnTheSameDataDirectoryExitsNamingTheHolder) {
  const std::string config = persistentConfig(dataDir());
  ASSERT_TRUE(server_.start(config));
  ServerProcess second;
  second.spawn(config);
  EXPECT_NE(second.wait(), 0);
  const std::string err = second.stderrText();
  EXPECT_NE(err.find((dataDir() / "default").string()), std::string::npos) << err;
  EXPECT_NE(err.find("in use by process"), std::string::npos) << err;
  // The first is untouched.
  protocol::Client c = server_.connect();
  EXPECT_EQ(c.set(0, "k", "v").value().status, Status::kSuccess);
}

TEST(PersistenceConfig, ACouchbaseBucketWithoutDataDirIsRefusedNamingTheKey) {
  ServerProcess server;
  server.spawn(R"({"buckets": {"default": {"bucket_type": "couchbase"}}})", {}, false);
  EXPECT_NE(server.wait(), 0);
  EXPECT_NE(server.stderrText().find("buckets.default.bucket_type"), std::string::npos)
      << server.stderrText();
  EXPECT_NE(server.stderrText().find("data_dir"), std::string::npos) << server.stderrText();
}

}  // namespace
}  // namespace syncwrite::server
