// Integration tests of the faults a test can steer (issue 16): a simulated
// replica paused, resumed and slowed through SET_PARAM on the real
// syncwrite-server, in both timeout modes. Every assertion on time is a lower
// bound ("never answered before its timeout"); none bounds how late.
#include <chrono>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using namespace std::chrono_literals;
using protocol::Opcode;
using protocol::Status;
using testing::durable;
using testing::eventually;
using testing::ServerProcess;
using testing::setParam;
using testing::statValue;

// One bucket, 16 vbuckets, replica1 simulated with no delay.
std::string faultsConfig(std::string_view mode) {
  return std::string(
             R"({"buckets": {"default": {"max_vbuckets": 16, "durability_timeout_mode": ")") +
         std::string(mode) +
         R"(", "durability_timeout_task_interval": 5, "replicas": ["replica1"],
             "simulated_replicas": {"replica1": {"ack_delay_ms": 0}}}}})";
}

// A durable SET timed from just before it is sent to its answer.
struct Timed {
  Status status;
  std::chrono::steady_clock::duration elapsed;
};
Timed timedSet(protocol::Client& client, uint16_t vb, const std::string& key, uint16_t timeout_ms) {
  const auto start = std::chrono::steady_clock::now();
  auto r = client.set(vb, key, "v", durable(timeout_ms));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.ok()) << r.status();
  return {r.ok() ? r->status : Status::kEinval, elapsed};
}

class ReplicaFaultsTest : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(BothModes, ReplicaFaultsTest, ::testing::Values("event-driven", "polling"),
                         [](const auto& info) {
                           return info.param == "polling" ? "Polling" : "EventDriven";
                         });

TEST_P(ReplicaFaultsTest, APausedReplicaMakesWritesTimeOutAndAResumedOneCommits) {
  ServerProcess server;
  ASSERT_TRUE(server.start(faultsConfig(GetParam())));
  auto client = server.connect();
  ASSERT_EQ(timedSet(client, 1, "before", 5000).status, Status::kSuccess);

  setParam(client, "simulated_replicas_paused", "replica1");
  for (uint16_t timeout : {50, 120, 80}) {
    const Timed t = timedSet(client, 2, "paused" + std::to_string(timeout), timeout);
    EXPECT_EQ(t.status, Status::kSyncWriteAmbiguous);
    EXPECT_GE(t.elapsed, std::chrono::milliseconds(timeout)) << "answered before its timeout";
  }

  // A write sent while paused, with a long timeout, commits once resumed: the
  // replica acks what it held.
  auto held = server.connect();
  const uint32_t opaque = held.nextOpaque();
  std::string request;
  protocol::appendStore(request, Opcode::kSet, opaque, 3, "held", "v", durable(60000));
  ASSERT_TRUE(held.sendRaw(request).ok());
  ASSERT_TRUE(
      eventually([&] { return statValue(client, "durability", "sync_writes_in_flight") == 1; }));
  setParam(client, "simulated_replicas_paused", "");
  auto answer = held.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->opaque, opaque);
  EXPECT_EQ(answer->status, Status::kSuccess) << answer->errorContext();
  EXPECT_EQ(timedSet(client, 1, "after", 5000).status, Status::kSuccess);
  EXPECT_EQ(statValue(client, "durability", "sync_writes_aborted_timeout"), 3);
}

// The write behind a long head is answered at its own deadline, its key stays
// busy, and it commits with the head when the replica resumes: counted, not
// answered twice.
TEST_P(ReplicaFaultsTest, AWriteBehindALongHeadIsAnsweredAtItsDeadline) {
  ServerProcess server;
  ASSERT_TRUE(server.start(faultsConfig(GetParam())));
  auto admin = server.connect();
  auto head = server.connect();
  auto behind = server.connect();
  setParam(admin, "simulated_replicas_paused", "*");

  const uint32_t head_opaque = head.nextOpaque();
  std::string request;
  protocol::appendStore(request, Opcode::kSet, head_opaque, 4, "head", "v", durable(60000));
  ASSERT_TRUE(head.sendRaw(request).ok());
  ASSERT_TRUE(
      eventually([&] { return statValue(admin, "durability", "sync_writes_in_flight") == 1; }));

  const Timed t = timedSet(behind, 4, "behind", 100);
  EXPECT_EQ(t.status, Status::kSyncWriteAmbiguous);
  EXPECT_GE(t.elapsed, 100ms) << "answered before its timeout";
  EXPECT_EQ(statValue(admin, "durability", "sync_writes_answered_behind_head"), 1);
  EXPECT_EQ(timedSet(behind, 4, "behind", 100).status, Status::kSyncWriteInProgress)
      << "its prepare is still pending behind the head";

  setParam(admin, "simulated_replicas_paused", "");
  auto answer = head.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, Status::kSuccess);
  ASSERT_TRUE(
      eventually([&] { return statValue(admin, "durability", "sync_writes_in_flight") == 0; }));
  EXPECT_EQ(statValue(admin, "durability", "sync_writes_committed_after_answer"), 1);
  // Nothing more arrives on the connection that heard "ambiguous": the next
  // answer it reads is the NOOP's.
  auto noop = behind.noop();
  ASSERT_TRUE(noop.ok()) << noop.status();
  EXPECT_TRUE(behind.takeStrayResponses().empty()) << "a second answer to the same write";
}

TEST_P(ReplicaFaultsTest, TheAckDelayIsDynamic) {
  ServerProcess server;
  ASSERT_TRUE(server.start(faultsConfig(GetParam())));
  auto client = server.connect();
  setParam(client, "simulated_replica_ack_delay_ms", "replica1=60000");
  const Timed slow = timedSet(client, 5, "slow", 100);
  EXPECT_EQ(slow.status, Status::kSyncWriteAmbiguous);
  EXPECT_GE(slow.elapsed, 100ms);
  setParam(client, "simulated_replica_ack_delay_ms", "0");
  EXPECT_EQ(timedSet(client, 5, "fast", 5000).status, Status::kSuccess);
}

// A bounded run against a paused replica: several clients, mixed timeouts.
// Every write is answered exactly once, ambiguous, and never before its
// timeout.
TEST_P(ReplicaFaultsTest, NoWriteIsAnsweredBeforeItsTimeout) {
  ServerProcess server;
  ASSERT_TRUE(server.start(faultsConfig(GetParam())));
  auto admin = server.connect();
  setParam(admin, "simulated_replicas_paused", "replica1");
  constexpr int kClients = 4, kWrites = 6;
  std::vector<std::thread> threads;
  std::vector<std::vector<Timed>> results(kClients);
  std::vector<std::vector<uint16_t>> timeouts(kClients);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto client = server.connect();
      std::mt19937 rng(c);
      for (int i = 0; i < kWrites; ++i) {
        const auto timeout = static_cast<uint16_t>(20 + rng() % 180);
        timeouts[c].push_back(timeout);
        results[c].push_back(timedSet(client, static_cast<uint16_t>(rng() % 16),
                                      "c" + std::to_string(c) + "-" + std::to_string(i), timeout));
      }
      auto noop = client.noop();
      EXPECT_TRUE(noop.ok() && client.takeStrayResponses().empty()) << "an extra answer";
    });
  }
  for (auto& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) {
    for (int i = 0; i < kWrites; ++i) {
      EXPECT_EQ(results[c][i].status, Status::kSyncWriteAmbiguous);
      EXPECT_GE(results[c][i].elapsed, std::chrono::milliseconds(timeouts[c][i]))
          << "client " << c << " write " << i << " answered early";
    }
  }
}

TEST(ReplicaFaults, BadValuesAreRefusedAndChangeNothing) {
  ServerProcess server;
  ASSERT_TRUE(server.start(faultsConfig("event-driven")));
  auto client = server.connect();
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"simulated_replicas_paused", "nobody"},
           {"simulated_replica_ack_delay_ms", "replica1=x"},
           {"simulated_replica_ack_delay_ms", "60001"},
           {"simulated_replica_ack_jitter_ms", "replica2=5"}}) {
    auto r = client.setParam(key, value);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, Status::kEinval) << key << "=" << value;
    EXPECT_NE(r->errorContext().find(key), std::string::npos) << r->errorContext();
  }
  auto stats = client.stats("config");
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->find("simulated_replicas_paused").value_or("?"), "");
  EXPECT_EQ(stats->find("simulated_replica_ack_delay_ms").value_or("?"), "");
  EXPECT_EQ(timedSet(client, 1, "k", 5000).status, Status::kSuccess) << "the replica still acks";
}

TEST(ReplicaFaults, JitteredReplicasCommitEveryWrite) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"buckets": {"default": {"max_vbuckets": 16,
      "replicas": ["replica1", "replica2"],
      "simulated_replicas": {"replica1": {"ack_delay_ms": 0, "ack_jitter_ms": 3},
                             "replica2": {"ack_delay_ms": 1, "ack_jitter_ms": 3}}}}})"));
  auto client = server.connect();
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(timedSet(client, static_cast<uint16_t>(i % 16), "k" + std::to_string(i), 5000).status,
              Status::kSuccess);
  }
}

}  // namespace
}  // namespace syncwrite::server
