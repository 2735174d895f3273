// Integration tests of one connection's answers around SyncWrites, against the
// real syncwrite-server: answers ahead of a pending SyncWrite leave, those
// behind it wait and keep request order (every kind of answer, and
// SyncWrites that resolve apart); UnorderedExecution, switched on and off;
// and flow control: more SyncWrites in flight than a connection takes.
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/byte_order.h"
#include "server/protocol/feature.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::DurabilitySpec;
using protocol::Opcode;
using protocol::Status;
using testing::durable;
using testing::eventually;
using testing::readAnswer;
using testing::ServerProcess;
using testing::silentReplicaConfig;
using testing::statValue;

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
// first (server/connection.h, Connection::takeTurn()). Every connection here shares
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
  const protocol::Feature unordered[] = {protocol::Feature::kXerror,
                                         protocol::Feature::kUnorderedExecution};
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

// Unordered: a SyncWrite resolved in the middle of a turn is answered before
// the turn's later requests. The writer is also the replica (DCP_OPEN), so
// one batch — [its seqno ack, which commits A on this I/O thread, then a
// plain SET of A's key] — runs in one turn with the resolution forced
// between the two requests, every time. The SET succeeds (A committed), and
// its answer must come after A's. Before the inbox was checked before each
// request (not only at the turn's start), it came first. Resolutions from
// other threads (a replica on another I/O thread, the timeout task) set the
// same flag; the test above has the ack on another connection.
TEST(ServerDurability, UnorderedAnswersASyncWriteResolvedInTheMiddleOfATurnFirst) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = server.connect();
  const protocol::Feature unordered[] = {protocol::Feature::kXerror,
                                         protocol::Feature::kUnorderedExecution};
  ASSERT_TRUE(writer.hello(unordered).ok());
  auto opened = writer.dcpOpen("replica1");
  ASSERT_TRUE(opened.ok());
  ASSERT_EQ(opened->status, Status::kSuccess);
  constexpr uint16_t kVb = 3;
  uint64_t high_seqno = 0;
  for (int round = 0; round < 20; ++round) {
    const std::string key = "mid-turn-" + std::to_string(round);
    std::string batch;
    const uint32_t a = writer.nextOpaque();
    protocol::appendStore(batch, Opcode::kSet, a, kVb, key, "a", durable(10'000));
    const uint32_t noop = writer.nextOpaque();
    protocol::appendSimple(batch, Opcode::kNoop, noop);
    ASSERT_TRUE(writer.sendRaw(batch).ok());
    ASSERT_NO_FATAL_FAILURE(readAnswer(writer, noop, Status::kSuccess));  // A is pending

    batch.clear();
    protocol::appendSeqnoAcknowledged(batch, writer.nextOpaque(), kVb, high_seqno + 1);
    const uint32_t c = writer.nextOpaque();
    protocol::appendStore(batch, Opcode::kSet, c, kVb, key, "c");
    ASSERT_TRUE(writer.sendRaw(batch).ok());
    ASSERT_NO_FATAL_FAILURE(readAnswer(writer, a, Status::kSuccess));  // A first, then C
    ASSERT_NO_FATAL_FAILURE(readAnswer(writer, c, Status::kSuccess));
    high_seqno += 3;  // A's prepare and commit, C
  }
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
      const protocol::Feature features[] = {protocol::Feature::kXerror,
                                            protocol::Feature::kUnorderedExecution};
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
  const protocol::Feature unordered[] = {protocol::Feature::kXerror,
                                         protocol::Feature::kUnorderedExecution};
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
