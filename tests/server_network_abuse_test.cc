// Clients that misbehave at the transport level, against the real server:
// half a request and silence, a client that never reads its answers, a flood
// of connections past max_connections, a client that leaves with a thousand
// SyncWrites in flight. Each must cost the server a bounded amount, be closed
// or refused with a log line and a counter, and leave everyone else served.
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>

#include "server/protocol/client.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Opcode;
using protocol::Status;
using std::chrono::steady_clock;
using testing::eventually;
using testing::kHangGuard;
using testing::ServerProcess;
using testing::silentReplicaConfig;
using testing::statValue;

// NOOPs `client` every 100 ms on a thread of its own until destroyed, so that
// connection_idle_time never closes it while the test waits for another.
class KeepAlive {
 public:
  explicit KeepAlive(protocol::Client& client)
      : thread_([this, &client] {
          while (!stop_.load()) {
            if (!client.noop().ok()) failed_.store(true);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }) {}
  ~KeepAlive() {
    stop_.store(true);
    thread_.join();
    EXPECT_FALSE(failed_.load()) << "a NOOP on the kept-alive connection failed";
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

size_t openDescriptors(int64_t pid) {
  const std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/fd";
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                           std::filesystem::directory_iterator()));
}

TEST(ServerNetworkAbuse, HalfAHeaderAndSilenceIsClosedAfterTheIdleTimeWhileOthersAreServed) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"connection_idle_time": 2, "buckets": {"default": {}}})"));
  auto other = server.connect();
  auto half = protocol::Client::connect("127.0.0.1", server.port(), {.timeout = kHangGuard});
  ASSERT_TRUE(half.ok()) << half.status();
  const auto sent = steady_clock::now();
  ASSERT_TRUE(half->sendRaw(std::string("\x80\x01\x00\x05\x00\x00\x00\x00\x00\x00", 10)).ok());
  {
    KeepAlive keep_alive(other);
    EXPECT_TRUE(half->waitForClose().ok());
  }
  const auto waited = steady_clock::now() - sent;
  EXPECT_GE(waited, std::chrono::seconds(2)) << "closed before connection_idle_time";
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_EQ(statValue(other, "", "idle_connections_closed"), 1);
  EXPECT_EQ(statValue(other, "", "connections"), 1);
  EXPECT_NE(server.stderrText().find("(connection_idle_time), closing it"), std::string::npos)
      << server.stderrText();
}

TEST(ServerNetworkAbuse, AClientWaitingForItsSyncWriteIsNotIdle) {
  ServerProcess server;
  ASSERT_TRUE(server.start(
      R"({"connection_idle_time": 1, "buckets": {"default": {"replicas": ["replica1"]}}})"));
  auto client = server.connect();
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{durability::Level::kMajority, 2500};
  // Silent for 2.5 s, over twice the idle time, waiting for the answer.
  auto set = client.set(0, "k", "v", options);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->status, Status::kSyncWriteAmbiguous);
  EXPECT_TRUE(client.noop().ok());
  EXPECT_EQ(statValue(client, "", "idle_connections_closed"), 0);
  // Owed nothing, it is idle now.
  EXPECT_TRUE(client.waitForClose().ok());
}

TEST(ServerNetworkAbuse, AQuietDcpConnectionIsNotIdle) {
  ServerProcess server;
  ASSERT_TRUE(server.start(
      R"({"connection_idle_time": 1, "buckets": {"default": {"replicas": ["replica1"]}}})"));
  auto replica = server.connect();
  auto open = replica.dcpOpen("replica1");
  ASSERT_TRUE(open.ok()) << open.status();
  ASSERT_EQ(open->status, Status::kSuccess) << open->errorContext();
  const auto opened = steady_clock::now();
  // The control: a connection as quiet but without DCP is closed.
  auto plain = server.connect();
  EXPECT_TRUE(plain.waitForClose().ok());
  std::this_thread::sleep_until(opened + std::chrono::milliseconds(2500));
  EXPECT_TRUE(replica.noop().ok()) << "the DCP connection was closed after 2.5 s of quiet";
  EXPECT_EQ(statValue(replica, "", "idle_connections_closed"), 1);
}

TEST(ServerNetworkAbuse, AClientThatNeverReadsIsBoundedThenClosedWhileOthersAreServed) {
  constexpr size_t kLimit = 1 << 20;
  constexpr size_t kValue = size_t{512} * 1024;
  ServerProcess server;
  ASSERT_TRUE(server.start(absl::StrCat(R"({"connection_idle_time": 2, "max_send_queue_bytes": )",
                                        kLimit, R"(, "buckets": {"default": {}}})")));
  auto other = server.connect();
  auto set = other.set(0, "big", std::string(kValue, 'x'));
  ASSERT_TRUE(set.ok() && set->ok());

  auto sink = server.connect();
  const int small = 4096;
  ::setsockopt(sink.nativeHandle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  // 200 MiB of answers asked for; the kernel's buffers hold a few MiB.
  std::string batch;
  for (int i = 0; i < 400; ++i) protocol::appendGet(batch, sink.nextOpaque(), 0, "big");
  ASSERT_TRUE(sink.sendRaw(batch).ok());

  ASSERT_TRUE(eventually([&] { return statValue(other, "", "send_queue_full") >= 1; }));
  auto get = other.get(0, "big");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->value.size(), kValue);
  // Closed once no byte has been taken for connection_idle_time.
  ASSERT_TRUE(eventually([&] { return statValue(other, "", "stalled_connections_closed") == 1; }));
  EXPECT_TRUE(eventually([&] { return statValue(other, "", "connections") == 1; }));
  // It never held more than the bound plus the answer that crossed it.
  const int64_t held = statValue(other, "", "send_queue_max_bytes");
  EXPECT_GE(held, int64_t{kLimit});
  EXPECT_LE(held, int64_t{kLimit + kValue + 64});
  EXPECT_NE(server.stderrText().find("unsent answer bytes in 2 s (connection_idle_time)"),
            std::string::npos)
      << server.stderrText();
}

TEST(ServerNetworkAbuse, AFloodPastMaxConnectionsIsRefusedWithoutLeakingADescriptor) {
  constexpr int kMax = 4;
  constexpr int kFlood = 200;
  ServerProcess server;
  ASSERT_TRUE(server.start(
      absl::StrCat(R"({"max_connections": )", kMax, R"(, "buckets": {"default": {}}})")));
  auto observer = server.connect();
  const int64_t pid = statValue(observer, "", "pid");
  ASSERT_GT(pid, 0);
  std::vector<protocol::Client> held;
  for (int i = 1; i < kMax; ++i) held.push_back(server.connect());
  const size_t descriptors = openDescriptors(pid);

  for (int i = 0; i < kFlood; ++i) {
    auto refused = protocol::Client::connect("127.0.0.1", server.port(), {.timeout = kHangGuard});
    ASSERT_TRUE(refused.ok()) << refused.status();
    EXPECT_TRUE(refused->waitForClose().ok());
  }
  EXPECT_EQ(statValue(observer, "", "rejected_connections"), kFlood);
  EXPECT_EQ(openDescriptors(pid), descriptors);

  held.clear();
  EXPECT_TRUE(eventually([&] { return statValue(observer, "", "connections") == 1; }));
  EXPECT_EQ(openDescriptors(pid), descriptors - (kMax - 1));
  auto after = server.connect();
  EXPECT_TRUE(after.noop().ok());
  EXPECT_NE(server.stderrText().find("connection refused: max_connections (4) reached"),
            std::string::npos);
}

TEST(ServerNetworkAbuse, AClientThatLeavesWithAThousandSyncWritesInFlight) {
  constexpr int64_t kWrites = 1000;
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto observer = server.connect();
  {
    auto writer = server.connect();
    std::string batch;
    protocol::MutationOptions options;
    options.durability = protocol::DurabilitySpec{durability::Level::kMajority, 1500};
    for (int i = 0; i < kWrites; ++i) {
      protocol::appendStore(batch, Opcode::kSet, writer.nextOpaque(), static_cast<uint16_t>(i % 64),
                            "k" + std::to_string(i), "v", options);
    }
    ASSERT_TRUE(writer.sendRaw(batch).ok());
    ASSERT_TRUE(eventually(
        [&] { return statValue(observer, "durability", "sync_writes_in_flight") == kWrites; }));
  }  // gone, with every write pending
  EXPECT_TRUE(eventually([&] { return statValue(observer, "", "connections") == 1; }));
  // Each still resolves in the bucket, once, at its deadline.
  ASSERT_TRUE(
      eventually([&] { return statValue(observer, "durability", "sync_writes_in_flight") == 0; }));
  EXPECT_EQ(statValue(observer, "durability", "sync_writes_aborted_timeout"), kWrites);
  auto set = observer.set(0, "k0", "after");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->status, Status::kSuccess);
  auto get = observer.get(0, "k0");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->value, "after");
}

}  // namespace
}  // namespace syncwrite::server
