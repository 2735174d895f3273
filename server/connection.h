// Connection: one client's TCP connection — framing, ordering and closing.
//
// Reads with protocol::PacketReader, validates each packet with
// protocol::parseRequest and hands it to the Dispatcher.
//
// Ordered (the default): every request gets a response slot, in arrival
// order; most are filled at once, a durable write's when it resolves (its
// completion may run on any thread and posts the fill to this connection's
// strand). Responses go out strictly in slot order: a slot that is not ready
// holds back the ones behind it, so a client sees its answers in request
// order even though durable writes resolve later.
//
// Unordered (once HELLO agreed UnorderedExecution, kv_engine
// docs/UnorderedExecution.md): an answer leaves as soon as it is decided, so
// nothing waits behind a pending SyncWrite; the client matches answers by
// opaque. Requests are still executed in arrival order — only a SyncWrite's
// answer comes later — so a command that changes the connection's state
// (HELLO, SASL, SELECT_BUCKET) takes effect for every request after it, as
// the ordered semantics would have it. Slots still pending from before the
// switch keep their order among themselves.
//
// Flow control: at most kMaxSlots requests are unanswered or answered but
// not yet handed to a write; beyond that the connection stops reading until
// answers have been sent. One write is in flight at a time; it carries every
// ready response.
//
// Closing:
//  - graceful (QUIT, peer's end of stream, server shutdown): stop reading,
//    wait for every slot, send them, close;
//  - on a protocol violation (bad magic; a body over max_packet_size, which
//    is answered 0x03 first): stop reading, send the answers that are ready
//    in order, close — answers still pending are dropped with the connection;
//  - on an I/O error: close at once.
//
// Threading: everything but the constructor runs on the connection's strand
// (the socket's executor); start(), beginShutdown() and the LateReplies post
// to it. The object is owned by shared_ptrs: the pending I/O handlers and
// each unresolved durable write hold one.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>

#include "server/dispatcher.h"
#include "server/protocol/packet_reader.h"
#include "server/server_context.h"

namespace syncwrite::server {

// A connection's strand and socket by their concrete types. Through the
// type-erased any_io_executor (Boost 1.74), each handler the socket or a
// post dispatched copied the strand into a heap-held shared_ptr: heaptrack
// counted about three allocations per plain request from it (five per
// durable write).
using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;
using StrandSocket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, Strand>;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Requests in flight per connection before it stops reading.
  static constexpr size_t kMaxSlots = 1024;

  // Called once, on the strand, when the connection has closed.
  using OnClosed = std::function<void(Connection*)>;

  // `socket` must be open and have a strand as its executor.
  Connection(StrandSocket socket, ServerContext& context, Dispatcher& dispatcher,
             OnClosed on_closed);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts reading. Asynchronous.
  void start();

  // Stops reading and closes once every request read so far is answered and
  // sent. Asynchronous; idempotent.
  void beginShutdown();

  // "127.0.0.1:54321", for log lines.
  const std::string& peer() const noexcept { return peer_; }

 private:
  struct Slot {
    std::string bytes;
    bool ready = false;
  };
  enum class Closing { kNo, kAfterAll, kAfterReady };

  void doRead();
  void onRead(const boost::system::error_code& error, size_t bytes);
  void processBuffered();
  void handlePacket(const protocol::Packet& packet);
  void handleUnordered(const protocol::Request& request);
  LateReply lateReply(uint64_t slot_seq);
  LateReply unorderedLateReply();
  void fill(uint64_t slot_seq, std::string bytes);
  void fillUnordered(const std::string& bytes);
  // Requests that count against kMaxSlots.
  size_t inFlight() const noexcept {
    return slots_.size() + unordered_pending_ + unordered_queued_;
  }
  void flush();
  // flush() once the handlers already queued on the strand have run: the
  // answers that one acknowledgement resolved (each posted on its own) then
  // leave in one write, not one send each.
  void flushSoon();
  void onWritten(const boost::system::error_code& error);
  void maybeClose();
  void close();

  ServerContext& context_;
  Dispatcher& dispatcher_;
  const OnClosed on_closed_;
  StrandSocket socket_;
  const Strand strand_;
  std::string peer_;

  // On the strand only.
  protocol::PacketReader reader_;
  Session session_;
  std::deque<Slot> slots_;
  uint64_t first_slot_seq_ = 0;  // the sequence number of slots_.front()
  // Unordered mode: answers decided and not yet handed to a write, how many,
  // and SyncWrites whose answer is still to come.
  std::string unordered_out_;
  size_t unordered_queued_ = 0;
  size_t unordered_pending_ = 0;
  std::string write_buffer_;
  bool reading_ = false;
  bool read_paused_ = false;
  bool writing_ = false;
  bool flush_posted_ = false;
  bool closed_ = false;
  Closing closing_ = Closing::kNo;
};

}  // namespace syncwrite::server
