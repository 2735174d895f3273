// The flusher of a couchbase bucket on the real syncwrite-server: levels that
// need persistence on the active wait for it, flush_delay_ms delays them, a
// paused flusher holds them and — since the log behind its cursor cannot be
// expelled — fills the checkpoint quota until writes are refused with
// Etmpfail; resumed, everything goes through. An ephemeral bucket has no
// flusher: it refuses the persist levels (DurabilityInvalidLevel, as
// kv_engine's ephemeral buckets) and the flusher keys. Every assertion on time
// is a lower bound.
#include <chrono>
#include <string>

#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>

#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using namespace std::chrono_literals;
using protocol::DurabilitySpec;
using protocol::MutationOptions;
using protocol::Opcode;
using protocol::Status;
using testing::eventually;
using testing::ServerProcess;
using testing::setParam;
using testing::statValue;

// One couchbase bucket of 16 vbuckets whose chain is the active alone, so
// only local persistence stands between a persist-level write and its commit.
// Its data lives beside the server's port file.
std::string flusherConfig(const ServerProcess& server, std::string_view extra = "") {
  return absl::StrCat(R"({"data_dir": ")", (server.portFile().parent_path() / "data").string(),
                      R"(", "buckets": {"default": {"bucket_type": "couchbase", )",
                      R"("max_vbuckets": 16, "max_size": 2097152)", std::string(extra), "}}}");
}

MutationOptions level(durability::Level l, uint16_t timeout_ms = 60000) {
  MutationOptions options;
  options.durability = DurabilitySpec{l, timeout_ms};
  return options;
}

TEST(Flusher, PersistLevelsWaitForAPausedFlusherAndMajorityDoesNot) {
  ServerProcess server;
  ASSERT_TRUE(server.start(flusherConfig(server, R"(, "flusher_paused": true)")));
  auto admin = server.connect();
  for (durability::Level l :
       {durability::Level::kMajorityAndPersistOnMaster, durability::Level::kPersistToMajority}) {
    auto held = server.connect();
    const uint32_t opaque = held.nextOpaque();
    std::string request;
    protocol::appendStore(request, Opcode::kSet, opaque, 1, "persisted", "v", level(l));
    ASSERT_TRUE(held.sendRaw(request).ok());
    ASSERT_TRUE(
        eventually([&] { return statValue(admin, "durability", "sync_writes_in_flight") == 1; }));
    // Majority needs no disk: it commits while the flusher is paused.
    auto majority = admin.set(2, "majority", "v", level(durability::Level::kMajority));
    ASSERT_TRUE(majority.ok());
    EXPECT_EQ(majority->status, Status::kSuccess) << majority->errorContext();
    EXPECT_EQ(statValue(admin, "durability", "sync_writes_in_flight"), 1)
        << "the persist-level write committed with the flusher paused";

    setParam(admin, "flusher_paused", "false");
    auto answer = held.readResponse();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->opaque, opaque);
    EXPECT_EQ(answer->status, Status::kSuccess) << answer->errorContext();
    setParam(admin, "flusher_paused", "true");
  }
  EXPECT_GT(statValue(admin, "memory", "flusher_batches"), 0);
}

TEST(Flusher, APersistLevelWriteTimesOutAmbiguousBehindAPausedFlusher) {
  ServerProcess server;
  ASSERT_TRUE(server.start(flusherConfig(server, R"(, "flusher_paused": true)")));
  auto client = server.connect();
  const auto start = std::chrono::steady_clock::now();
  auto r = client.set(3, "k", "v", level(durability::Level::kPersistToMajority, 100));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Status::kSyncWriteAmbiguous);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
}

TEST(Flusher, FlushDelayHoldsPersistLevelWritesAtLeastThatLong) {
  ServerProcess server;
  ASSERT_TRUE(server.start(flusherConfig(server, R"(, "flush_delay_ms": 150)")));
  auto client = server.connect();
  // A run that began before a write arrived (the one start-up asks for) takes
  // it too, sooner than the delay after it: time a write the flusher is idle for.
  auto first = client.set(4, "first", "v", level(durability::Level::kMajorityAndPersistOnMaster));
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->status, Status::kSuccess) << first->errorContext();
  // ... and its commit, which another delayed run writes.
  ASSERT_TRUE(eventually([&] { return statValue(client, "memory", "flusher_items_queued") == 0; }));
  const auto start = std::chrono::steady_clock::now();
  auto r = client.set(4, "k", "v", level(durability::Level::kMajorityAndPersistOnMaster));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Status::kSuccess) << r->errorContext();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  setParam(client, "flush_delay_ms", "0");
  auto fast = client.set(4, "k2", "v", level(durability::Level::kMajorityAndPersistOnMaster));
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(fast->status, Status::kSuccess);
}

TEST(Flusher, APausedFlusherFillsTheCheckpointQuotaThenWritesAreRefusedUntilItResumes) {
  ServerProcess server;
  ASSERT_TRUE(server.start(flusherConfig(server, R"(, "flusher_paused": true)")));
  auto client = server.connect();
  const std::string value(4096, 'v');
  int accepted = 0;
  bool refused = false;
  // Few keys: the live data stays small, so only the log can fill.
  for (int i = 0; i < 5000 && !refused; ++i) {
    auto r = client.set(static_cast<uint16_t>(i % 16), "k" + std::to_string(i % 8), value);
    ASSERT_TRUE(r.ok());
    if (r->status == Status::kEtmpfail) {
      refused = true;
      EXPECT_NE(r->errorContext().find("checkpoint memory"), std::string::npos);
    } else {
      ASSERT_EQ(r->status, Status::kSuccess) << r->errorContext();
      ++accepted;
    }
  }
  ASSERT_TRUE(refused) << "20 MiB of log accepted behind a paused flusher under a 2 MiB quota";
  EXPECT_GT(statValue(client, "memory", "flusher_items_queued"), accepted / 2);
  EXPECT_GE(statValue(client, "memory", "checkpoint_memory"),
            statValue(client, "memory", "checkpoint_memory_quota"));
  auto read = client.get(1, "k1");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, Status::kSuccess) << "reads go on";

  setParam(client, "flusher_paused", "false");
  ASSERT_TRUE(eventually([&] {
    auto r = client.set(0, "after", value);
    return r.ok() && r->status == Status::kSuccess;
  }));
  EXPECT_TRUE(eventually([&] { return statValue(client, "memory", "flusher_items_queued") == 0; }));
}

TEST(EphemeralBucket, RefusesThePersistLevelsAsInvalidAndCommitsMajority) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"buckets": {"default": {"max_vbuckets": 4}}})"));
  auto client = server.connect();
  for (durability::Level l :
       {durability::Level::kMajorityAndPersistOnMaster, durability::Level::kPersistToMajority}) {
    auto r = client.set(1, "k", "v", level(l));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, Status::kDurabilityInvalidLevel) << r->errorContext();
    auto read = client.get(1, "k");
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->status, Status::kKeyNotFound) << "a refused SyncWrite wrote nothing";
  }
  auto majority = client.set(1, "k", "v", level(durability::Level::kMajority));
  ASSERT_TRUE(majority.ok());
  EXPECT_EQ(majority->status, Status::kSuccess) << majority->errorContext();
  EXPECT_EQ(statValue(client, "durability", "sync_writes_in_flight"), 0);
}

TEST(EphemeralBucket, RefusesTheFlusherKeysAndAPersistMinimumLevel) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"buckets": {"default": {"max_vbuckets": 4}}})"));
  auto client = server.connect();
  for (const auto& [key, value] :
       {std::pair{"flusher_paused", "true"}, std::pair{"flush_delay_ms", "10"},
        std::pair{"durability_min_level", "persist_to_majority"}}) {
    auto r = client.setParam(key, value);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, Status::kEinval) << key;
    EXPECT_NE(r->errorContext().find("ephemeral"), std::string::npos) << r->errorContext();
  }
  auto plain = client.set(1, "k", "v");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, Status::kSuccess) << "the refused settings changed nothing";

  for (const char* bucket : {R"("flusher_paused": true)",
                             R"("durability_min_level": "majority_and_persist_on_master")"}) {
    ServerProcess refused;
    refused.spawn(absl::StrCat(R"({"buckets": {"default": {)", bucket, "}}}"), {}, false);
    EXPECT_EQ(refused.wait(), 1) << bucket;
    EXPECT_NE(refused.stderrText().find("ephemeral"), std::string::npos) << refused.stderrText();
  }
}

}  // namespace
}  // namespace syncwrite::server
