// Connection: one client's TCP connection — framing, ordering and closing.
//
// Reads with protocol::PacketReader, validates each packet with
// protocol::parseRequest and hands it to the Dispatcher.
//
// Ordered (the default): answers leave in request order. While no answer
// is owed, a request's answer goes straight to ready_out_; a deferred one (a
// SyncWrite) and every request behind it take an AnswerSlot (answer_slot.h),
// in arrival order. Most are answered at once, a durable write's when it
// resolves (its completion may run on any thread and posts the fill to this
// connection's I/O thread). A slot that is not ready holds back the ones behind
// it, so a client sees its answers in request order even though durable
// writes resolve later.
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
// not yet handed to a write, and at most max_send_queue_bytes of answers are
// unsent (decided, and not yet taken by the kernel); at either bound the
// connection stops reading until answers have been sent (or, quiet ones that
// succeeded, taken with nothing to send). The byte bound is
// checked before each request, so a client that never reads costs at most
// that much plus the one answer that crossed it, and the answers of
// SyncWrites already in flight (kv_engine's max_send_queue_size does the
// same: it stops accepting new commands). One write is in flight at a time;
// it carries every ready response.
//
// Fairness: one turn on the I/O thread executes at most kRequestsPerTurn
// requests. A read that brought more (a pipelining client: a 64 KiB read can
// hold hundreds of SETs) sends what is answered and queues the rest as a new
// turn in its I/O thread's TurnQueue (turn_queue.h), which posts at most two
// such turns at a time, in arrival order; it reads no more
// until its buffer is drained. So a light connection's read waits behind a
// few busy connections' turns, not one turn of each. Without the
// budget, a burst of pipelined writes on a few hundred connections queued
// ~1 ms of work per connection ahead of everyone else: a GET on another
// connection waited up to a third of a second (bench/timeout_storm); with
// the budget alone, still tens of ms (docs/benchmarks.md, "Who stalls the
// bystander"). The figure is memcached's default for -R (requests per
// event, "to prevent starvation"). While turns wait in that queue, a read
// of kQueuedReadBytes or more queues its first turn there too, rather than
// running it in the read's completion: one epoll wake-up can complete up to
// 128 such reads, and their turns of 20 requests each ran back to back
// before the reactor looked again (~10 ms at 300 pipelining connections). A
// light connection's read (a request or a few) still runs at once. Last,
// the I/O thread itself gives way: after a turn that spent its budget, or a
// drain of late answers, once it has run a millisecond without sleeping it
// lets the threads waiting for its CPU go first (busy_yield.h), which the
// kernel would otherwise do only at its next tick.
//
// Idle and stalled (connection_idle_time, unless 0): a timer on the I/O thread,
// re-armed only when it fires, closes a connection that made no progress
// for that long. Progress is a read that brought bytes or a write that the
// kernel took bytes of (the reads and writes only stamp the time). No progress while a
// write is in flight: the client does not read its answers (stalled), and
// it is closed even with SyncWrites pending. No progress with no write in
// flight: closed (idle) unless an answer is still owed (a pending SyncWrite:
// the client waits for us), a turn waits in the TurnQueue (read requests
// not yet executed), or the connection opened DCP (a replica's stream may be
// quiet as long as there is nothing to acknowledge).
//
// Closing:
//  - graceful (QUIT, server shutdown): stop reading, wait for every slot,
//    send them, close;
//  - at the peer's end of stream, or on a protocol violation (bad magic; a
//    body over max_packet_size, which is answered 0x03 first): stop reading,
//    send the answers that are ready in order, close — answers still pending
//    (SyncWrites) are dropped with the connection, and their writes stay
//    tracked and resolve in the bucket. A client that closed its end is gone
//    (memcached's try_read_network treats a read of 0 bytes as an error and
//    closes the connection; kv_engine's daemon grew from that code):
//    waiting for its SyncWrites kept it open, and at SIGTERM 300k answers
//    were built, posted and written to dead peers before the server could exit;
//  - on an I/O error: close at once.
//
// Late answers: a SyncWrite's LateReply (this connection and a ticket: the
// slot's sequence number, or an index into the unordered shapes) may run on
// any thread (an executor worker resolving timeouts, the I/O thread that took
// a replica's ack). It appends the resolution to the connection's inbox
// under a mutex and queues one drain only when the inbox was empty, so the N
// answers that one timeout run or one ack resolves for this connection cost
// one handler on the I/O thread and leave in one write — not N handlers
// queued ahead of every other connection's reads. The drain waits in its
// I/O thread's drain queue (a TurnQueue, like a continuation turn: at most
// two posted at a time), so a storm that resolves writes for
// hundreds of connections at once does not queue a drain of each ahead of
// a light connection's read. The drain builds
// each answer from the shape the request left (in its slot, or for the
// unordered stream in unordered_shapes_): a slot keeps the resolution and
// builds the answer when sent; the unordered stream appends it to its
// output. Once the connection has closed, a resolution is dropped
// where it arrives, without a post (the write itself stays tracked and
// resolves in the bucket like any other).
//
// Unordered, a turn first answers what the inbox already holds, then
// executes its requests: a SyncWrite resolved before a request is executed
// has its answer leave first, even though its drain still waits in the
// queue. Without it, a plain write the SDK retried after SyncWriteInProgress
// could be answered before the SyncWrite whose commit let it through
// (ServerDurability.UnorderedAnswersASyncWriteResolvedBeforeTheNextRequestFirst
// failed every round). What stays open is the moment between a commit
// becoming visible in the hash table and its completion reaching the inbox:
// a request executed on another I/O thread in that moment is answered
// first. kv_engine has the same moment: VBucket::commit commits the stored
// value, then notifies the client's cookie (engines/ep/src/vbucket.cc).
//
// A LateReply owns nothing (command.h): while the connection owes answers it
// holds itself (keepalive_), and the resolution that settles the last one lets
// go. The count may dip below zero for a moment: a SyncWrite can resolve on
// another thread before its request's execute() has returned to say it was
// deferred.
//
// Threading: everything but the constructor and the LateReplies' delivery
// runs on the connection's I/O thread, through the socket's executor: its
// thread's io_context, which that one thread alone runs (server.h), so the
// connection's handlers never run beside each other and need no strand.
// start(), beginShutdown() and the inbox's drain post to it. The object is owned by
// shared_ptrs: the pending I/O handlers hold one, and the connection holds
// one to itself while SyncWrites it deferred are unresolved.
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

// A connection's executor and socket by their concrete types. Through the
// type-erased any_io_executor (Boost 1.74), each handler the socket or a
// post dispatched copied the strand the socket then had into a heap-held
// shared_ptr: heaptrack counted about three allocations per plain request
// from it (five per durable write). The executor is the I/O thread's
// io_context itself, not a strand on it: one thread runs that io_context
// (Server::run; the handlers assert it), which serialises the connection's
// handlers already, while a strand put each completion through its own
// queue, mutex, work count and invoker, and copied its shared_ptr. Without
// it, server CPU per SET at 1 in flight fell 5-13% (docs/benchmarks.md, "A
// connection's handlers without a strand").
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

  // Stops reading and closes once every request read so far is answered and
  // sent. Asynchronous; idempotent.
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
  // ReplySink. Any thread: queues the resolution in the inbox (see "Late
  // answers"); dropped at once once the connection is closed.
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
  // connection_idle_time (see "Idle and stalled").
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
  // freed (base/spare_block.h: a batch of 32 pipelined requests crosses two
  // or three blocks in, then out): it grows a block at a time, so a
  // connection with many SyncWrites pending neither leaves the smaller rings
  // it outgrew in the allocator's free lists nor holds up to twice the room
  // it uses, as a doubling ring (base::Fifo) did until 2026-11-28. Emptied,
  // it keeps its first block, the spares (up to 2 KiB) and its map of
  // blocks, where the ring kept up to 8 KiB.
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
  // Deferred requests not yet resolved (briefly negative: see "Late
  // answers"), and this connection while that is above zero.
  int64_t owed_ ABSL_GUARDED_BY(inbox_mutex_) = 0;
  std::shared_ptr<Connection> keepalive_ ABSL_GUARDED_BY(inbox_mutex_);
  // Set on the I/O thread when the connection closes; read by resolved() on
  // any thread to drop an answer nobody will read.
  std::atomic<bool> gone_{false};
};

}  // namespace syncwrite::server
