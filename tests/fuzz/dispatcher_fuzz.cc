// Fuzz target: a connection's requests through the Dispatcher, against a real
// in-process bucket, with no socket.
//
// Connection (server/connection.h) owns a TCP socket on its I/O thread's
// io_context, so it cannot be driven without one; this target does what its processBuffered()
// and handlePacket() do with the bytes a socket would have delivered:
// PacketReader, the read prefetch over what is buffered (read_prefetch.h),
// parseRequest (a refusal answered with appendParseError),
// Dispatcher::execute, stopping at kClose, kDisconnect (a status a client
// without XERROR is not sent, xerror_remap.h; a refused request's too), bad
// magic, sections longer than the body, or a body over max_packet_size
// (answered TooBig). Connection's own slot bookkeeping, flow
// control and writes are not exercised here.
//
// Input: byte 0 bit 0 picks the server: open (no users), or with one user
// ("fuzz", password "fuzz"), so that data commands need SASL first. The rest
// is the byte stream. Each input gets a new bucket "default" (4 vbuckets, the
// chain [active, replica1] with replica1 not simulated, so a SyncWrite waits
// for a DCP_SEQNO_ACKNOWLEDGED, its timeout or the end) and a new Session; at
// the end the bucket is shut down, which answers every SyncWrite still in
// flight (ambiguous).
//
// Properties, for every complete request before the stream stopped:
//  - disconnected (kDisconnect): it appended nothing;
//  - answered at once (kAnswered, kClose): what it appended is whole response
//    packets with its opcode and opaque: exactly one; or at most one for a
//    quiet command and DCP_SEQNO_ACKNOWLEDGED (nothing on success,
//    docs/protocol.md); or for STAT any number ending in the empty
//    terminator; it never uses a LateReply;
//  - deferred (kDeferred): it appended nothing, and its LateReply is used
//    exactly once (at the latest by the shutdown); the answer built from
//    its resolution and the shape it left (appendLateAnswer) is one such
//    packet, or none for a quiet command.
// Requests after one that closed the connection are not executed, as in
// Connection (the loop stops); that is how the target drives, not a check.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "config/configuration.h"
#include "executor/executor_pool.h"
#include "server/bucket.h"
#include "server/connection.h"
#include "server/dispatcher.h"
#include "server/log.h"
#include "server/protocol/packet_reader.h"
#include "server/protocol/request.h"
#include "server/protocol/response_encoder.h"
#include "server/read_prefetch.h"
#include "server/server_context.h"
#include "server/xerror_remap.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace protocol = syncwrite::server::protocol;
namespace server = syncwrite::server;
using protocol::Opcode;

// A body over this is answered TooBig and ends the stream, as the server's
// max_packet_size does; small, so that inputs reach it.
constexpr size_t kMaxPacketSize = size_t{64} * 1024;
constexpr std::chrono::seconds kHangGuard{30};

// One server: its context (pool, users) lives for the process; the bucket is
// made per input.
struct Fixture {
  boost::asio::io_context io;  // no simulated replica posts to it; never run
  server::ServerContext context;
  std::unique_ptr<server::Dispatcher> dispatcher;

  using Users = std::map<std::string, std::string, std::less<>>;

  explicit Fixture(const Users& users) {
    context.server_config =
        std::make_unique<syncwrite::config::Configuration>(syncwrite::config::Scope::kServer);
    context.node_name = "active";
    context.max_connections = 1;
    context.max_packet_size = kMaxPacketSize;
    context.io_threads = 1;
    context.users = std::make_unique<server::sasl::UserStore>(users);
    context.pool = std::make_unique<syncwrite::executor::ExecutorPool>(1);
    dispatcher = std::make_unique<server::Dispatcher>(context);
  }

  server::Bucket& newBucket() {
    server::BucketSpec spec;
    spec.name = "default";
    spec.config =
        std::make_unique<syncwrite::config::Configuration>(syncwrite::config::Scope::kBucket);
    const auto loaded = spec.config->loadString(R"({"max_vbuckets": 4, "flush_enabled": true})");
    FUZZ_CHECK(loaded.ok(), std::string(loaded.message()));
    spec.replicas = {"replica1"};
    auto bucket = server::Bucket::create(std::move(spec), context.node_name, *context.pool,
                                         [this]() -> boost::asio::io_context& { return io; });
    FUZZ_CHECK(bucket.ok(), std::string(bucket.status().message()));
    server::Bucket& b = **bucket;
    context.buckets["default"] = std::move(*bucket);
    context.default_bucket = &b;
    return b;
  }

  void dropBucket() {
    context.default_bucket = nullptr;
    context.buckets.clear();
  }
};

// What the LateReplies delivered, from any thread.
struct LateAnswers final : server::ReplySink {
  std::mutex mutex;
  std::condition_variable changed;
  // request index -> resolutions
  std::map<size_t, std::vector<syncwrite::durability::Resolution>> by_request;

  // The ticket is the request's index.
  void resolved(uint64_t index, const syncwrite::durability::Resolution& resolution) override {
    const std::lock_guard lock(mutex);
    by_request[index].push_back(resolution);
    changed.notify_all();
  }
};

struct Executed {
  Opcode opcode;
  uint32_t opaque;
  server::Disposition disposition;
  std::string out;
  server::LateAnswerShape shape;  // when deferred: how its answer is built
};

// Checks that `bytes` are whole responses to (opcode, opaque), and how many.
void checkAnswer(std::string_view bytes, Opcode opcode, uint32_t opaque) {
  protocol::PacketReader reader(protocol::PacketReader::Direction::kResponses, SIZE_MAX >> 1);
  reader.feed(bytes);
  size_t count = 0;
  protocol::PacketReader::Next next;
  bool terminated = false;
  for (next = reader.next(); next.result == protocol::PacketReader::Result::kPacket;
       next = reader.next()) {
    FUZZ_CHECK(next.header.opcode == opcode && next.header.opaque == opaque,
               "an answer names another request");
    FUZZ_CHECK(!terminated, "an answer after the STAT terminator");
    ++count;
    terminated = opcode == Opcode::kStat && next.packet.key.empty() && next.packet.value.empty();
  }
  FUZZ_CHECK(next.result == protocol::PacketReader::Result::kNeedMore && reader.buffered() == 0,
             "an answer that is not whole packets");
  if (opcode == Opcode::kStat && count > 1) {
    FUZZ_CHECK(terminated, "a STAT answer without its terminator");
  } else if (protocol::isQuiet(opcode) || opcode == Opcode::kDcpSeqnoAcknowledged ||
             opcode == Opcode::kDcpBufferAcknowledgement) {
    FUZZ_CHECK(count <= 1, "a command that may answer nothing answered twice");
  } else {
    FUZZ_CHECK(count == 1, "a command not answered exactly once");
  }
}

Fixture& fixture(bool with_user) {
  static Fixture open(Fixture::Users{});
  static Fixture secured(Fixture::Users{{"fuzz", "fuzz"}});
  return with_user ? secured : open;
}

void discardLog(std::string_view /*line*/) {}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  server::setLogSink(&discardLog);
  Fixture& f = fixture((data[0] & 1) != 0);
  server::Bucket& bucket = f.newBucket();
  auto late = std::make_shared<LateAnswers>();
  std::vector<Executed> executed;
  {
    server::Session session;
    session.peer = "fuzz";
    protocol::PacketReader reader(protocol::PacketReader::Direction::kRequests, kMaxPacketSize);
    reader.feed(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
    bool closed = false;
    while (!closed) {
      // As Connection does before each turn (every packet here: a turn of
      // one), with the session as the requests so far left it.
      server::prefetchReads(reader.unread(), session, f.context,
                            server::Connection::kRequestsPerTurn);
      const protocol::PacketReader::Next next = reader.next();
      if (next.result != protocol::PacketReader::Result::kPacket)
        break;  // kTooBig, kBadMagic, kBadLengths: closed
      const protocol::ParseResult parsed = protocol::parseRequest(next.packet);
      Executed& e = executed.emplace_back(
          Executed{next.header.opcode, next.header.opaque, server::Disposition::kAnswered, {}, {}});
      if (!parsed.ok()) {
        protocol::appendParseError(e.out, parsed, session.json);
        if (!session.xerror && !server::remapForClientWithoutXerror(e.out, 0)) {
          e.disposition = server::Disposition::kDisconnect;
          closed = true;
        }
        continue;
      }
      const size_t index = executed.size() - 1;
      int defers = 0;
      e.disposition = f.dispatcher->execute(
          parsed.request, session, e.out,
          [&, index] {
            ++defers;
            return server::LateReply(late.get(), index);
          },
          e.shape);
      FUZZ_CHECK(defers <= 1, "defer() called twice for one request");
      closed = e.disposition == server::Disposition::kClose ||
               e.disposition == server::Disposition::kDisconnect;
    }
    // Everything still in flight is answered (ambiguous) by the shutdown.
    bucket.shutdown(syncwrite::durability::AmbiguousReason::kShutdown);
  }

  size_t deferred = 0;
  for (const Executed& e : executed) deferred += e.disposition == server::Disposition::kDeferred;
  {
    std::unique_lock lock(late->mutex);
    const bool all = late->changed.wait_for(lock, kHangGuard, [&] {
      size_t answered = 0;
      for (const auto& [index, answers] : late->by_request) answered += answers.size();
      return answered >= deferred;
    });
    FUZZ_CHECK(all, "a deferred request was never answered");
  }
  f.dropBucket();
  // The bucket is gone: its durability layer holds no LateReply any more.
  const std::lock_guard lock(late->mutex);
  for (size_t i = 0; i < executed.size(); ++i) {
    const Executed& e = executed[i];
    const auto it = late->by_request.find(i);
    if (e.disposition == server::Disposition::kDeferred) {
      FUZZ_CHECK(e.out.empty(), "a deferred request also answered at once");
      FUZZ_CHECK(it != late->by_request.end() && it->second.size() == 1,
                 "a deferred request not answered exactly once");
      std::string answer;
      server::appendLateAnswer(answer, e.shape, it->second.front());
      checkAnswer(answer, e.opcode, e.opaque);
    } else {
      FUZZ_CHECK(it == late->by_request.end(), "a request answered at once used its LateReply");
      if (e.disposition == server::Disposition::kDisconnect) {
        FUZZ_CHECK(e.out.empty(), "a disconnecting request also appended an answer");
      } else {
        checkAnswer(e.out, e.opcode, e.opaque);
      }
    }
  }
  return 0;
}
