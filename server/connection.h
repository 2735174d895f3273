// Connection: one client's TCP connection — framing, answer order, flow
// control and closing. Reads with protocol::PacketReader, validates each
// packet with protocol::parseRequest and hands it to the Dispatcher.
//
// Order. Ordered (the default): answers leave in request order. While no
// answer is owed an answer goes straight to ready_out_; a deferred one (a
// SyncWrite) and every request behind it take an AnswerSlot (answer_slot.h),
// and a slot not yet ready holds back the ones behind it. Unordered (HELLO
// agreed UnorderedExecution, kv_engine docs/UnorderedExecution.md): an answer
// leaves once decided; the client matches answers by opaque. Either way
// requests are executed in arrival order, so HELLO, SASL and SELECT_BUCKET
// apply to every request after them (see takeTurn() for the unordered case).
//
// Flow control. Reading stops while kMaxSlots requests are unanswered or not
// yet handed to a write, or max_send_queue_bytes of decided answers are not
// yet taken by the kernel, and resumes once answers are sent. The byte bound
// is checked before each request: a client that never reads costs at most
// that bound, the answer that crossed it, and the answers of SyncWrites
// already in flight (as kv_engine's max_send_queue_size). One write is in
// flight at a time; it carries every ready answer.
//
// Fairness. A turn executes at most kRequestsPerTurn requests (memcached's -R
// default); the rest wait as a new turn in the I/O thread's TurnQueue
// (turn_queue.h; no read until the buffer is drained), as does the first turn
// of a read of kQueuedReadBytes or more while turns wait. A thread busy a
// slice yields its CPU after such a turn or a drain (busy_yield.h).
//
// Closing. Graceful (QUIT, beginShutdown()): see beginShutdown(). At end of
// stream, a protocol violation (bad magic or sections longer than the body:
// unanswered; a body over max_packet_size: 0x03 first), or an answer a
// client without XERROR is not sent (xerror_remap.h): stop reading and
// executing, send the answers that are ready (ordered: up to the first
// pending slot), close. Pending SyncWrites still resolve in the bucket,
// unanswered. I/O error: at once. (Deferred answers: connection_late_answers.cc.)
//
// Threading: everything but the constructor and resolved() runs on the
// connection's I/O thread, the one thread that runs its io_context (server.h),
// so its handlers never run beside each other and need no strand. Owned by
// shared_ptrs: the pending I/O handlers hold one, and the connection holds one
// to itself (keepalive_) while answers it deferred are owed.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/handler_memory.h"
#include "base/mutex.h"
#include "base/spare_block.h"
#include "server/answer_slot.h"
#include "server/dispatcher.h"
#include "server/protocol/packet_reader.h"
#include "server/server_context.h"

namespace syncwrite::server {

// A connection's executor and socket by their concrete types: the type-erased
// any_io_executor (Boost 1.74) heap-allocated per dispatched handler. The
// executor is the I/O thread's io_context itself, not a strand on it: one
// thread runs that io_context (Server::run; the handlers assert it), which
// already serialises the connection's handlers. docs/benchmarks.md, "A
// connection's handlers without a strand".
using IoExecutor = boost::asio::io_context::executor_type;
using IoSocket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, IoExecutor>;
using IoTimer = boost::asio::basic_waitable_timer<
    std::chrono::steady_clock, boost::asio::wait_traits<std::chrono::steady_clock>, IoExecutor>;

class Connection final : public std::enable_shared_from_this<Connection>,
                         public ReplySink,
                         private TurnQueue::Client {
 public:
  // Requests in flight per connection before it stops reading.
  static constexpr size_t kMaxSlots = 1024;
  // Requests one turn executes before the others' handlers go first.
  static constexpr size_t kRequestsPerTurn = 20;
  // A read of at least this many bytes may hold more than a turn (24 is a
  // request's header alone): when turns wait, its first turn waits too.
  static constexpr size_t kQueuedReadBytes = kRequestsPerTurn * 24;

  // Called once, on the I/O thread, when the connection has closed.
  using OnClosed = std::function<void(Connection*)>;

  // `socket` must be open, with an io_context's executor that only one
  // thread runs: that of I/O thread `io_thread` (its TurnQueues in
  // `context`).
  Connection(IoSocket socket, size_t io_thread, ServerContext& context, Dispatcher& dispatcher,
             OnClosed on_closed);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts reading. Asynchronous.
  void start();

  // Graceful close, as QUIT: posted to the I/O thread, it stops reading and
  // executing. Every request already executed is answered (a deferred
  // SyncWrite when it resolves), the answers are sent, then the connection
  // closes. Requests read but not yet executed — buffered behind a turn
  // queued in the TurnQueue or behind a flow-control bound — are dropped
  // unexecuted and unanswered, as is anything not yet read. A connection
  // already closing after end of stream or a protocol violation keeps that
  // rule (see "Closing"). Asynchronous; idempotent.
  void beginShutdown();

  // "127.0.0.1:54321", for log lines.
  const std::string& peer() const noexcept { return peer_; }

 private:
  enum class Closing { kNo, kAfterAll, kAfterReady };
  // A SyncWrite resolved off the I/O thread: `ticket` is its slot's sequence
  // number, or kUnorderedTicket | its index in unordered_shapes_.
  struct LateAnswer {
    uint64_t ticket;
    durability::Resolution resolution;
  };
  static constexpr uint64_t kUnorderedTicket = uint64_t{1} << 63;

  void doRead();
  void onRead(const boost::system::error_code& error, size_t bytes);
  // Executes buffered requests (processBuffered) and flushes, then reads
  // more or queues another turn (TurnQueue): when the turn's budget ran out
  // first, or when it stopped at a flow-control bound that its flush lifted.
  // Unordered, before each request it answers what the inbox holds (a flag
  // resolved() sets says when there is any), so a SyncWrite resolved before
  // a request is executed — on any thread, at any point of the turn — is
  // answered before it (a plain write the SDK retried after
  // SyncWriteInProgress is not answered ahead of the commit that let it
  // through). Not covered: a commit visible in the hash table whose
  // completion has not reached the inbox yet — a request executed in that
  // moment is answered first, as in kv_engine, where VBucket::commit commits
  // the value, then notifies the cookie.
  void takeTurn();
  // Queues the next turn in the TurnQueue (turn_posted_: no read until it
  // has run).
  void queueTurn();
  // TurnQueue::Client: posts the queued turn to the I/O thread; it ends with
  // TurnQueue::finished().
  void startTurn() override;
  // Why processBuffered() stopped.
  enum class TurnEnd {
    kDone,         // the buffer holds no whole request, or the connection is closing
    kBudgetSpent,  // kRequestsPerTurn executed, more possibly buffered
    kAtBound,      // a flow-control bound (mayRead()), requests possibly still buffered
  };
  // Executes up to kRequestsPerTurn buffered requests.
  TurnEnd processBuffered();
  // After a turn that spent its budget or a drain: lets the threads waiting
  // for this I/O thread's CPU run first once it has been busy a whole slice
  // (busy_yield.h), and counts it (io_busy_yields).
  void yieldIfBusy();
  void handlePacket(const protocol::Packet& packet);
  void handleUnordered(const protocol::Request& request);
  // On the I/O thread: a request was deferred; the connection owes its answer.
  void noteDeferred();
  // An index into unordered_shapes_ for a SyncWrite's shape.
  uint32_t takeUnorderedIndex();
  // ReplySink: a SyncWrite's LateReply (this connection and a ticket: the
  // slot's sequence number, or kUnorderedTicket | an index into
  // unordered_shapes_), from any thread (a worker or the timer thread
  // resolving timeouts, the I/O thread that took an ack). Appends to the
  // inbox under inbox_mutex_ and queues a drain in drains_ (a TurnQueue: at
  // most two posted per I/O thread) only when none is posted, so the answers
  // one timeout run or one batch of acks resolves for this connection cost one
  // handler and leave in one write. Once the connection has closed the
  // resolution is dropped here, without a post (the write itself stays
  // tracked and resolves in the bucket). The last owed answer releases
  // keepalive_; a LateReply owns nothing (command.h).
  void resolved(uint64_t ticket, const durability::Resolution& resolution) override;
  // On the I/O thread: answers every resolution the inbox holds, then flushes once.
  void drainInbox();
  // On the I/O thread: answers every resolution the inbox holds, without a
  // flush. `drain`: called by the queued drain, which is no longer posted;
  // otherwise a drain still queued later finds less, or nothing.
  void fillFromInbox(bool drain);
  // The inbox's drain as a TurnQueue client (drains_): posts
  // drainInbox() to the I/O thread's io_context, which then reports finished.
  class DrainTurn final : public TurnQueue::Client {
   public:
    explicit DrainTurn(Connection& connection) : connection_(connection) {}
    void startTurn() override;

   private:
    Connection& connection_;
  };
  void fill(uint64_t slot_seq, const durability::Resolution& resolution);
  // Appends the front slot's answer (ready) to write_buffer_ and pops it.
  void sendFrontSlot();
  void fillUnordered(uint32_t index, const durability::Resolution& resolution);
  // Requests that count against kMaxSlots.
  size_t inFlight() const noexcept {
    return slots_.size() + ready_queued_ + unordered_pending_ + unordered_queued_;
  }
  // Below both flow-control bounds (kMaxSlots, max_send_queue_bytes).
  bool mayRead() const noexcept {
    return inFlight() < kMaxSlots && unsent_bytes_ < context_.max_send_queue_bytes;
  }
  // `bytes` more of answers are decided and unsent (send_queue_max_bytes).
  void noteUnsent(size_t bytes);
  // `slot` holds its answer: count its bytes as unsent.
  void markReady(const AnswerSlot& slot) { noteUnsent(slot.size()); }
  // connection_idle_time, unless 0: a timer on the I/O thread, re-armed only
  // when it fires, closes a connection that made no progress (a read that
  // brought bytes, a write the kernel took bytes of; these only stamp the
  // time) for that long. With a write in flight it is closed (stalled: the
  // client reads no answers), even with SyncWrites pending; with none, it is
  // closed (idle) unless an answer is owed, a turn waits in the TurnQueue
  // (requests read, not yet executed), or it opened DCP (a replica's stream
  // may be quiet while there is nothing to acknowledge).
  void armIdleTimer(std::chrono::steady_clock::time_point at);
  void onIdleTimer(const boost::system::error_code& error);
  void noteProgress() {
    if (context_.connection_idle_time.count() > 0)
      last_progress_ = std::chrono::steady_clock::now();
  }
  void flush();
  // A read paused at a flow-control bound (doRead()) starts again once the
  // connection is back under both with no write in flight to do it
  // (onWritten()): answers that free slots may hold no bytes at all (a quiet
  // SyncWrite that succeeded), so popping them starts no write. Queues the
  // read's turn.
  void resumeReadIfPaused();
  // Moves the unordered stream's decided answers to the end of ready_out_.
  // Called before an ordered answer goes to ready_out_: after a HELLO turned
  // UnorderedExecution off, answers decided before it would otherwise leave
  // after it, since flush() sends ready_out_ first.
  void takeUnorderedAnswers();
  // Writes write_buffer_ from write_offset_ on; onWritten() goes on until
  // all of it is taken.
  void writeSome();
  void onWritten(const boost::system::error_code& error, size_t bytes);
  void maybeClose();
  void close();

  ServerContext& context_;
  // This connection's I/O thread's continuation turns and drains.
  TurnQueue& turns_;
  TurnQueue& drains_;
  Dispatcher& dispatcher_;
  const OnClosed on_closed_;
  IoSocket socket_;
  const IoExecutor executor_;
  std::string peer_;

  // On the I/O thread only.
  protocol::PacketReader reader_;
  Session session_;
  // Taken only behind an answer still owed (answer_slot.h); the bytes of
  // their kInline answers are behind_out_[behind_sent_..], in slot order,
  // and those of kOutOfLine ones are in out_of_line_ by sequence number.
  // A deque of 512-byte blocks (16 slots) that keeps the last four blocks it
  // freed (base/spare_block.h): it grows a block at a time, so a connection
  // with many SyncWrites pending holds about the room it uses. Emptied, it
  // keeps its first block, the spares (up to 2 KiB) and its map of blocks.
  base::SpareBlock slots_spare_{4};  // declared first: it outlives slots_
  std::deque<AnswerSlot, base::SpareBlockAllocator<AnswerSlot>> slots_{
      base::SpareBlockAllocator<AnswerSlot>(slots_spare_)};
  uint64_t first_slot_seq_ = 0;  // the sequence number of slots_.front()
  std::string behind_out_;
  size_t behind_sent_ = 0;
  absl::flat_hash_map<uint64_t, std::string> out_of_line_;
  // Answers decided while no slot was owed, in order, and how many: all of
  // them come before every slot (appended only while slots_ is empty; flush()
  // sends them first).
  std::string ready_out_;
  size_t ready_queued_ = 0;
  // Unordered mode: answers decided and not yet handed to a write, how many,
  // and SyncWrites whose answer is still to come, with their answers' shapes
  // (at most kMaxSlots; free indices reused).
  std::string unordered_out_;
  size_t unordered_queued_ = 0;
  size_t unordered_pending_ = 0;
  std::vector<LateAnswerShape> unordered_shapes_;
  std::vector<uint32_t> unordered_free_;
  std::string write_buffer_;
  size_t write_offset_ = 0;  // bytes of write_buffer_ the kernel has taken
  bool reading_ = false;
  bool read_paused_ = false;
  bool turn_posted_ = false;  // a turn is queued; no read until it has run
  bool writing_ = false;
  bool closed_ = false;
  Closing closing_ = Closing::kNo;
  // Answer bytes decided and not yet taken by the kernel (ready_out_, ready
  // slots, unordered_out_, write_buffer_), and the most this connection ever
  // held.
  size_t unsent_bytes_ = 0;
  size_t unsent_high_ = 0;
  IoTimer idle_timer_{executor_};
  std::chrono::steady_clock::time_point last_progress_;
  // The memory of the operations a connection repeats, one of each kind in
  // flight at a time (reading_, writing_, turn_posted_, drain_posted_), so
  // that they allocate nothing (base/handler_memory.h).
  base::HandlerMemory read_memory_;
  base::HandlerMemory write_memory_;
  base::HandlerMemory turn_memory_;
  base::HandlerMemory drain_memory_;
  // The inbox's answers while the I/O thread fills them (kept for its capacity).
  std::vector<LateAnswer> draining_;
  DrainTurn drain_turn_{*this};

  // Late answers from any thread, drained on the I/O thread.
  base::Mutex inbox_mutex_;
  std::vector<LateAnswer> inbox_ ABSL_GUARDED_BY(inbox_mutex_);
  bool drain_posted_ ABSL_GUARDED_BY(inbox_mutex_) = false;
  // Deferred requests not yet resolved, and this connection while that is
  // above zero. Briefly negative: a SyncWrite can resolve on another thread
  // before its request's execute() has returned to say it was deferred.
  int64_t owed_ ABSL_GUARDED_BY(inbox_mutex_) = 0;
  // inbox_ holds answers: set by resolved() and cleared by fillFromInbox(),
  // both under inbox_mutex_; read without it before each unordered request.
  std::atomic<bool> inbox_filled_{false};
  std::shared_ptr<Connection> keepalive_ ABSL_GUARDED_BY(inbox_mutex_);
  // Set on the I/O thread when the connection closes; read by resolved() on
  // any thread to drop an answer nobody will read.
  std::atomic<bool> gone_{false};
};

}  // namespace syncwrite::server
