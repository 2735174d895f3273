// Integration tests: syncwrite-server as a process — start-up errors, orderly
// shutdown with SyncWrites in flight, bad input on one connection while
// another keeps working, commands without a bucket, max_connections.
#include <signal.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/frame_info.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Opcode;
using protocol::Status;
using testing::eventually;
using testing::ServerProcess;
using testing::silentReplicaConfig;
using testing::statValue;

TEST(ServerProcess, SigtermAnswersEveryInFlightSyncWriteAndExitsZero) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = server.connect();
  auto observer = server.connect();

  constexpr int kWrites = 10;
  std::string batch;
  std::vector<uint32_t> opaques;
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{durability::Level::kMajority, 60000};
  for (int i = 0; i < kWrites; ++i) {
    opaques.push_back(writer.nextOpaque());
    protocol::appendStore(batch, Opcode::kSet, opaques.back(), static_cast<uint16_t>(i), "key", "v",
                          options);
  }
  ASSERT_TRUE(writer.sendRaw(batch).ok());
  ASSERT_TRUE(eventually(
      [&] { return statValue(observer, "durability", "sync_writes_in_flight") == kWrites; }));

  server.signal(SIGTERM);
  for (uint32_t opaque : opaques) {
    auto answer = writer.readResponse();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->opaque, opaque);
    EXPECT_EQ(answer->status, Status::kSyncWriteAmbiguous);
    EXPECT_NE(answer->errorContext().find("shutdown"), std::string::npos);
  }
  EXPECT_TRUE(writer.waitForClose().ok());
  EXPECT_TRUE(observer.waitForClose().ok());
  EXPECT_EQ(server.wait(), 0) << server.stderrText();
  EXPECT_NE(server.stderrText().find("SIGTERM"), std::string::npos);
}

// Clients that left with SyncWrites pending: their connections close at
// once (the answers owed to them are dropped), while their writes stay
// tracked (the store must stay consistent) and are still resolved at
// SIGTERM, and the drain does not wait for them (it used to wait its full
// 10 s: the I/O threads could run out of work before the answers were
// posted; a work guard holds them now).
TEST(ServerProcess, ClientsThatLeftWithSyncWritesPendingDoNotHoldUpShutdown) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto observer = server.connect();
  constexpr int kClients = 4;
  constexpr int kWritesEach = 50;
  constexpr int64_t kPending = int64_t{kClients} * kWritesEach;
  {
    std::vector<protocol::Client> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.push_back(server.connect());
      std::string batch;
      protocol::MutationOptions options;
      options.durability = protocol::DurabilitySpec{durability::Level::kMajority, 60000};
      for (int i = 0; i < kWritesEach; ++i) {
        protocol::appendStore(batch, Opcode::kSet, clients.back().nextOpaque(),
                              static_cast<uint16_t>(i),
                              "k" + std::to_string(c) + "_" + std::to_string(i), "v", options);
      }
      ASSERT_TRUE(clients.back().sendRaw(batch).ok());
    }
    ASSERT_TRUE(eventually(
        [&] { return statValue(observer, "durability", "sync_writes_in_flight") == kPending; }));
  }  // every writer disconnects with its writes pending
  // Their connections are closed without waiting for the writes (only the
  // observer's is left), and the writes are still tracked.
  EXPECT_TRUE(eventually([&] { return statValue(observer, "", "connections") == 1; }));
  EXPECT_EQ(statValue(observer, "durability", "sync_writes_in_flight"), kPending);

  server.signal(SIGTERM);
  EXPECT_TRUE(observer.waitForClose().ok());
  EXPECT_EQ(server.wait(), 0) << server.stderrText();
  EXPECT_EQ(server.stderrText().find("did not drain"), std::string::npos) << server.stderrText();
}

TEST(ServerProcess, AFloodOfMalformedPacketsOnOneConnectionLeavesAnotherWorking) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto bad = server.connect();
  auto good = server.connect();

  std::atomic<bool> stop{false};
  std::atomic<int> good_ok{0};
  std::thread worker([&] {
    for (int i = 0; !stop.load(); ++i) {
      auto set = good.set(static_cast<uint16_t>(i % 1024), "k" + std::to_string(i), "v");
      if (!set.ok() || set->status != Status::kSuccess) return;
      good_ok.fetch_add(1);
    }
  });

  // Each malformed request gets its own error answer, in order.
  std::string batch;
  std::vector<std::pair<uint32_t, Status>> expected;
  const std::string long_key(251, 'k');
  std::string durability_frame;
  protocol::appendDurabilityFrame(durability_frame, durability::Level::kMajority);
  for (int round = 0; round < 200; ++round) {
    auto add = [&](protocol::RequestFields fields, Status status) {
      fields.opaque = bad.nextOpaque();
      protocol::appendRequest(batch, fields);
      expected.emplace_back(fields.opaque, status);
    };
    add({.opcode = static_cast<Opcode>(0xee)}, Status::kUnknownCommand);
    add({.opcode = Opcode::kSet, .key = "k"}, Status::kEinval);  // no extras
    add({.opcode = Opcode::kGet, .key = long_key}, Status::kEinval);
    add({.opcode = Opcode::kGet, .framing_extras = durability_frame, .key = "k"}, Status::kEinval);
    add({.opcode = Opcode::kSet,
         .durability = protocol::DurabilitySpec{durability::Level::kMajority, 0},
         .extras = std::string_view("\0\0\0\0\0\0\0\0", 8),
         .key = "k"},
        Status::kDurabilityInvalidLevel);  // a reserved timeout, as kv_engine
    add({.opcode = Opcode::kSet,
         .durability = protocol::DurabilitySpec{static_cast<durability::Level>(9), 100},
         .extras = std::string_view("\0\0\0\0\0\0\0\0", 8),
         .key = "k"},
        Status::kDurabilityInvalidLevel);
  }
  ASSERT_TRUE(bad.sendRaw(batch).ok());
  for (const auto& [opaque, status] : expected) {
    auto answer = bad.readResponse();
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_EQ(answer->opaque, opaque);
    EXPECT_EQ(answer->status, status);
  }
  // A bad magic closes that connection, and only that one.
  ASSERT_TRUE(bad.sendRaw(std::string(24, '\x42')).ok());
  EXPECT_TRUE(bad.waitForClose().ok());

  ASSERT_TRUE(eventually([&] { return good_ok.load() >= 10; }));
  stop = true;
  worker.join();
  auto still = server.connect();
  EXPECT_TRUE(still.noop().ok());
}

// A pipelined burst far over one turn's budget (Connection::kRequestsPerTurn,
// 20) is executed in turns that let other connections go in between; every
// request is still answered once, in order, and the quiet ones stay quiet
// across the turns' edges.
TEST(ServerProcess, APipelinedBurstIsExecutedInTurnsAndAnsweredInOrder) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto admin = server.connect();
  const int64_t turns_before = statValue(admin, "", "read_turns_yielded");
  auto client = server.connect();
  constexpr int kRequests = 1000;
  std::string batch;
  std::vector<uint32_t> answered_opaques;
  for (int i = 0; i < kRequests; ++i) {
    const uint32_t opaque = client.nextOpaque();
    // Every third a quiet SET (no answer on success), the others GETs of it.
    if (i % 3 == 0) {
      protocol::appendStore(batch, Opcode::kSetQ, opaque, static_cast<uint16_t>(i % 1024),
                            "burst" + std::to_string(i), "v" + std::to_string(i));
    } else {
      protocol::appendRequest(batch, {.opcode = Opcode::kGet,
                                      .opaque = opaque,
                                      .vbucket = static_cast<uint16_t>((i - i % 3) % 1024),
                                      .key = "burst" + std::to_string(i - i % 3)});
      answered_opaques.push_back(opaque);
    }
  }
  ASSERT_TRUE(client.sendRaw(batch).ok());
  for (uint32_t opaque : answered_opaques) {
    auto answer = client.readResponse();
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_EQ(answer->opaque, opaque) << "answers out of order, or a quiet SET answered";
    EXPECT_EQ(answer->status, Status::kSuccess);
  }
  EXPECT_TRUE(client.noop().ok());
  // However the reads split the burst, a turn ends at 20 requests with more
  // buffered at least once per read that brought more than 20.
  EXPECT_GE(statValue(admin, "", "read_turns_yielded") - turns_before, 1);
}

// Several connections pipelining at once: while their continuation turns
// wait in the TurnQueue, a read that may hold more than a turn queues its
// first turn there too (Connection, "Fairness"); every request still takes
// effect once, in order per connection, and each connection's NOOP answers
// last. The server is stopped (SIGSTOP) while the clients send, so that
// every burst is in its socket when it resumes: however fast the server,
// each I/O thread then finds six reads at once, and after the first two
// continuation turns (the queue posts two) the later ones wait, so the reads
// behind them queue. A burst stays within what the sockets buffer.
TEST(ServerProcess, ReadsOfBusyConnectionsQueueTheirFirstTurn) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto admin = server.connect();
  const int64_t queued_before = statValue(admin, "", "read_turns_queued");
  const int64_t yields_before = statValue(admin, "", "io_busy_yields");
  constexpr int kConnections = 12;  // six on each of the two I/O threads
  constexpr int kRequests = 1000;   // ~43 KB a connection
  std::vector<protocol::Client> clients;
  for (int c = 0; c < kConnections; ++c) clients.push_back(server.connect());
  std::vector<uint32_t> noops;
  server.signal(SIGSTOP);
  for (int c = 0; c < kConnections; ++c) {
    std::string batch;
    for (int i = 0; i < kRequests; ++i) {
      // Each key written twice, the second value last: order matters.
      const int k = i % (kRequests / 2);
      protocol::appendStore(batch, Opcode::kSetQ, clients[c].nextOpaque(),
                            static_cast<uint16_t>(k % 1024),
                            "q" + std::to_string(c) + "-" + std::to_string(k), std::to_string(i));
    }
    noops.push_back(clients[c].nextOpaque());
    protocol::appendRequest(batch, {.opcode = Opcode::kNoop, .opaque = noops.back()});
    ASSERT_TRUE(clients[c].sendRaw(batch).ok());
  }
  server.signal(SIGCONT);
  for (int c = 0; c < kConnections; ++c) {
    auto answer = clients[c].readResponse();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->opaque, noops[c]) << "a quiet SET answered";
  }
  EXPECT_GE(statValue(admin, "", "read_turns_queued") - queued_before, 1);
  // Each I/O thread found its six bursts buffered at once, milliseconds of
  // work with no reason to sleep: it called sched_yield at least once
  // (busy_yield.h).
  EXPECT_GE(statValue(admin, "", "io_busy_yields") - yields_before, 1);
  for (int c = 0; c < kConnections; ++c) {
    for (int k : {0, 123, kRequests / 2 - 1}) {
      auto got = admin.get(static_cast<uint16_t>(k % 1024),
                           "q" + std::to_string(c) + "-" + std::to_string(k));
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(got->value, std::to_string(k + kRequests / 2)) << "the later SET wins";
    }
  }
}

// Each I/O thread runs its own io_context, and a connection stays on the
// one it was given: the thread with the fewest open connections, the next
// in turn among equals. Round robin alone would pile new connections onto
// one thread while the other's closed.
TEST(ServerProcess, ANewConnectionGoesToTheIoThreadWithFewestOpen) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto admin = server.connect();
  // Until anything the start-up opened has closed, and been counted off its
  // thread.
  ASSERT_TRUE(eventually([&] {
    return statValue(admin, "", "mcbp_io0_connections") +
               statValue(admin, "", "mcbp_io1_connections") ==
           1;
  }));
  const std::string admins = statValue(admin, "", "mcbp_io0_connections") == 1
                                 ? "mcbp_io0_connections"
                                 : "mcbp_io1_connections";
  const std::string others =
      admins == "mcbp_io0_connections" ? "mcbp_io1_connections" : "mcbp_io0_connections";
  // Open connections on the admin's thread and on the other one.
  const auto open = [&]() -> std::pair<int64_t, int64_t> {
    return {statValue(admin, "", admins), statValue(admin, "", others)};
  };
  ASSERT_EQ(open(), (std::pair<int64_t, int64_t>{1, 0}));
  // The first goes to the other thread (fewer); the second, at one each, to
  // the admin's (next in turn); the third to the other (fewer).
  std::optional<protocol::Client> first(server.connect());
  ASSERT_EQ(open(), (std::pair<int64_t, int64_t>{1, 1}));
  std::optional<protocol::Client> second(server.connect());
  ASSERT_EQ(open(), (std::pair<int64_t, int64_t>{2, 1}));
  std::optional<protocol::Client> third(server.connect());
  ASSERT_EQ(open(), (std::pair<int64_t, int64_t>{2, 2}));
  // Closing the other thread's two leaves it empty; the next connection
  // goes there, where round robin would have put it on the admin's.
  first.reset();
  third.reset();
  ASSERT_TRUE(eventually([&] { return open() == std::pair<int64_t, int64_t>{2, 0}; }));
  std::optional<protocol::Client> fourth(server.connect());
  EXPECT_EQ(open(), (std::pair<int64_t, int64_t>{2, 1}));
  EXPECT_TRUE(second->noop().ok());
  EXPECT_TRUE(fourth->noop().ok());
}

TEST(ServerProcess, ABodyOverMaxPacketSizeIsAnsweredTooBigAndClosed) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"max_packet_size": 1024, "buckets": {"default": {}}})"));
  auto client = server.connect();
  std::string request;
  protocol::appendStore(request, Opcode::kSet, 77, 0, "k", std::string(2000, 'v'));
  ASSERT_TRUE(client.sendRaw(request).ok());
  auto answer = client.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, Status::kTooBig);
  EXPECT_EQ(answer->opaque, 77u);
  EXPECT_TRUE(client.waitForClose().ok());
}

// docs/protocol.md: a request CAS makes a write conditional, and flags are
// kept and returned.
TEST(ServerProcess, ARequestCasIsCheckedAndFlagsAreKept) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = server.connect();
  auto missing = client.set(3, "k", "v", {.cas = 5});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, Status::kKeyNotFound);
  auto stored = client.set(3, "k", "v", {.flags = 7});
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->status, Status::kSuccess);
  auto got = client.get(3, "k");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->status, Status::kSuccess);
  EXPECT_EQ(got->value, "v");
  EXPECT_EQ(got->extras, std::string("\0\0\0\x07", 4));
  EXPECT_EQ(got->cas, stored->cas);

  auto stale = client.set(3, "k", "w", {.cas = stored->cas + 1});
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->status, Status::kKeyExists);
  auto matched = client.replace(3, "k", "w", {.cas = stored->cas});
  ASSERT_TRUE(matched.ok()) << matched.status();
  EXPECT_EQ(matched->status, Status::kSuccess);
  EXPECT_NE(matched->cas, stored->cas);
  auto add_with_cas = client.add(3, "new", "v", {.cas = 1});
  ASSERT_TRUE(add_with_cas.ok()) << add_with_cas.status();
  EXPECT_EQ(add_with_cas->status, Status::kEinval);
  auto stale_delete = client.del(3, "k", {.cas = stored->cas});
  ASSERT_TRUE(stale_delete.ok()) << stale_delete.status();
  EXPECT_EQ(stale_delete->status, Status::kKeyExists);
  auto deleted = client.del(3, "k", {.cas = matched->cas});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(deleted->status, Status::kSuccess);
}

TEST(ServerProcess, DataCommandsNeedASelectedBucketButTaskStatsDoNot) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = server.connect("");
  auto set = client.set(0, "k", "v");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->status, Status::kNoBucket);
  auto get = client.get(0, "k");
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, Status::kNoBucket);
  auto durability = client.stats("durability");
  ASSERT_TRUE(durability.ok());
  EXPECT_EQ(durability->status, Status::kNoBucket);

  auto tasks = client.stats("tasks");
  ASSERT_TRUE(tasks.ok());
  ASSERT_TRUE(tasks->ok());
  for (const char* name :
       {"timeout_task_runs_total", "timeout_tasks_total", "executor_nonio_threads",
        "default:timeout_task_runs", "default:timeout_mode"}) {
    EXPECT_TRUE(tasks->find(name).has_value()) << name;
  }
  EXPECT_EQ(tasks->find("default:timeout_mode"), "event-driven");
  auto general = client.stats("");
  ASSERT_TRUE(general.ok());
  EXPECT_EQ(general->find("buckets"), "1");
  auto unknown = client.stats("nonsense");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, Status::kKeyNotFound);
  auto missing = client.selectBucket("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, Status::kKeyNotFound);

  auto refused = protocol::Client::connectToBucket("127.0.0.1", server.port(), "nope", "test");
  EXPECT_TRUE(absl::IsNotFound(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find(":" + std::to_string(server.port()) +
                                            ": no bucket \"nope\": "),
            std::string::npos)
      << refused.status();
}

// The build's SYNCWRITE_MALLOC is what the process runs: a release server
// whose link dropped tcmalloc would say "system" here.
TEST(ServerProcess, ReportsTheAllocatorItWasBuiltWith) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto general = server.connect("").stats("");
  ASSERT_TRUE(general.ok());
  const std::string allocator = general->find("allocator").value_or("");
  if (std::string_view(SYNCWRITE_SERVER_MALLOC) == "tcmalloc") {
    EXPECT_TRUE(allocator.starts_with("tcmalloc (gperftools ")) << allocator;
  } else {
    EXPECT_EQ(allocator, "system");
  }
}

// STAT allocator: the malloc's name, and with tcmalloc where its bytes are.
TEST(ServerProcess, StatAllocatorSaysWhereTheHeapIs) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = server.connect("");
  auto stats = client.stats("allocator");
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE(stats->ok()) << stats->error_context;
  auto general = client.stats("");
  ASSERT_TRUE(general.ok());
  EXPECT_EQ(stats->find("allocator"), general->find("allocator"));
  if (std::string_view(SYNCWRITE_SERVER_MALLOC) != "tcmalloc") {
    EXPECT_EQ(stats->stats.size(), 1u) << "only the name without tcmalloc";
    return;
  }
  auto number = [&](const std::string& name) -> int64_t {
    const std::optional<std::string> value = stats->find(name);
    return value ? std::stoll(*value) : -1;
  };
  const int64_t allocated = number("generic.current_allocated_bytes");
  const int64_t heap = number("generic.heap_size");
  EXPECT_GT(allocated, 0);
  EXPECT_GE(heap, allocated) << "the heap holds what is allocated";
  EXPECT_GE(number("generic.total_physical_bytes"), allocated) << "in pages that are mapped";
  for (const char* cache :
       {"tcmalloc.pageheap_free_bytes", "tcmalloc.central_cache_free_bytes",
        "tcmalloc.transfer_cache_free_bytes", "tcmalloc.thread_cache_free_bytes"}) {
    EXPECT_GE(number(cache), 0) << cache;
  }
}

TEST(ServerProcess, ConnectionsBeyondMaxConnectionsAreClosed) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"max_connections": 1, "buckets": {"default": {}}})"));
  auto first = server.connect("");
  auto second = protocol::Client::connect("127.0.0.1", server.port());
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->waitForClose().ok());
  EXPECT_TRUE(first.noop().ok());
}

TEST(ServerProcess, ABadConfigFileStopsStartUpWithTheConfigLayersMessage) {
  ServerProcess server;
  server.spawn(R"({"buckets": {"default": {"durability_timeout_mode": "sometimes"}}})", {},
               /*listen=*/false);
  EXPECT_NE(server.wait(), 0);
  const std::string err = server.stderrText();
  EXPECT_NE(err.find("buckets.default"), std::string::npos) << err;
  EXPECT_NE(err.find("durability_timeout_mode"), std::string::npos) << err;
  EXPECT_NE(err.find("sometimes"), std::string::npos) << err;
}

TEST(ServerProcess, AnUnknownOptionExitsTwoWithUsage) {
  ServerProcess server;
  server.spawn(std::nullopt, {"--colour", "blue"}, /*listen=*/false);
  EXPECT_EQ(server.wait(), 2);
  EXPECT_NE(server.stderrText().find("unknown flag --colour"), std::string::npos);
  EXPECT_NE(server.stderrText().find("usage:"), std::string::npos);
}

}  // namespace
}  // namespace syncwrite::server
