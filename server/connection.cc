#include "server/connection.h"

#include <cassert>
#include <optional>
#include <utility>

#include <absl/strings/str_cat.h>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include "server/busy_yield.h"
#include "server/dcp_producer.h"
#include "server/log.h"
#include "server/protocol/request.h"
#include "server/protocol/response_encoder.h"
#include "server/read_prefetch.h"
#include "server/xerror_remap.h"

namespace syncwrite::server {

namespace {
// A write buffer that grew past this (a big STAT or GET answer) is released
// after the write instead of being kept for the next one.
constexpr size_t kKeepWriteBufferBytes = 1 << 20;
// What a DCP producer adds to one write at most (its streams' messages).
constexpr size_t kDcpFillBytes = size_t{256} * 1024;
}  // namespace

Connection::Connection(IoSocket socket, size_t io_thread, ServerContext& context,
                       Dispatcher& dispatcher, OnClosed on_closed)
    : context_(context),
      turns_(*context.turns.at(io_thread)),
      drains_(*context.drains.at(io_thread)),
      dispatcher_(dispatcher),
      on_closed_(std::move(on_closed)),
      socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      reader_(protocol::PacketReader::Direction::kRequests, context.max_packet_size) {
  boost::system::error_code ec;
  auto endpoint = socket_.remote_endpoint(ec);
  peer_ = ec ? "unknown peer" : absl::StrCat(endpoint.address().to_string(), ":", endpoint.port());
  session_.peer = peer_;
}

void Connection::start() {
  session_.dcp_wake = [weak = weak_from_this(), executor = executor_] {
    boost::asio::post(executor, [weak] {
      if (auto self = weak.lock()) self->flush();
    });
  };
  boost::asio::post(executor_, [self = shared_from_this()] {
    // Closed already (a shutdown posted from another thread can run first):
    // an idle timer armed now would hold the connection until it fired.
    if (self->closed_) return;
    if (self->context_.connection_idle_time.count() > 0) {
      self->noteProgress();
      self->armIdleTimer(self->last_progress_ + self->context_.connection_idle_time);
    }
    self->doRead();
  });
}

void Connection::beginShutdown() {
  boost::asio::post(executor_, [self = shared_from_this()] {
    if (self->closing_ == Closing::kNo) self->closing_ = Closing::kAfterAll;
    self->maybeClose();
  });
}

void Connection::doRead() {
  if (closed_ || closing_ != Closing::kNo || reading_ || turn_posted_) return;
  if (!mayRead()) {
    // Resumed by onWritten(), or by flush() when the answers it took held no
    // bytes to write (resumeReadIfPaused()).
    if (!read_paused_ && unsent_bytes_ >= context_.max_send_queue_bytes) {
      context_.send_queue_full.fetch_add(1, std::memory_order_relaxed);
    }
    read_paused_ = true;
    return;
  }
  reading_ = true;
  std::span<char> buffer = reader_.prepare();
  socket_.async_read_some(
      boost::asio::buffer(buffer.data(), buffer.size()),
      base::withMemory(read_memory_,
                       [self = shared_from_this()](const boost::system::error_code& error,
                                                   size_t bytes) { self->onRead(error, bytes); }));
}

void Connection::onRead(const boost::system::error_code& error, size_t bytes) {
  // One thread runs this I/O thread's io_context (connection.h): no strand needed.
  assert(executor_.running_in_this_thread());
  reading_ = false;
  if (closed_) return;
  if (error) {
    if (error == boost::asio::error::eof) {
      // The client is gone: send what is ready, then close (connection.h).
      if (closing_ == Closing::kNo) closing_ = Closing::kAfterReady;
      maybeClose();
    } else if (error != boost::asio::error::operation_aborted) {
      close();
    }
    return;
  }
  noteProgress();
  reader_.commit(bytes);
  // Busy (other connections' turns wait) and this read may hold more than a
  // turn: its first turn waits its turn too (connection.h, "Fairness").
  if (bytes >= kQueuedReadBytes && turns_.waiting() != 0) {
    context_.read_turns_queued.fetch_add(1, std::memory_order_relaxed);
    queueTurn();
    return;
  }
  takeTurn();
}

void Connection::queueTurn() {
  turn_posted_ = true;
  // Aliasing: the queue owns this connection through its (private) base.
  turns_.push(std::shared_ptr<TurnQueue::Client>(shared_from_this(), this));
}

void Connection::takeTurn() {
  assert(executor_.running_in_this_thread());
  // Unordered: what resolved before these requests execute is answered
  // first (connection.h, takeTurn()). No lock unless a SyncWrite of
  // this connection is pending.
  if (unordered_pending_ != 0) fillFromInbox(/*drain=*/false);
  const TurnEnd end = processBuffered();
  const bool budget_spent = end == TurnEnd::kBudgetSpent;
  if (budget_spent) {
    // More is buffered than one turn may execute: send what is answered, and
    // go on when the TurnQueue says (connection.h, "Fairness").
    context_.read_turns_yielded.fetch_add(1, std::memory_order_relaxed);
    queueTurn();
  }
  // The answers first, then the next read: asio's read first tries a recv
  // at once, which a client still waiting for its answer leaves empty. The
  // answers handed to the write no longer count against kMaxSlots when
  // doRead() checks the bounds; their bytes count until the kernel has them.
  flush();
  if (budget_spent) {
    yieldIfBusy();
  } else if (end == TurnEnd::kAtBound && mayRead() && !turn_posted_) {
    // Stopped at a bound that the flush lifted (unordered: the answers the
    // turn took from the inbox left with it). The requests still buffered go
    // first: a read would wait for bytes a client waiting for their answers
    // never sends.
    queueTurn();
  } else {
    doRead();
  }
}

void Connection::yieldIfBusy() {
  if (BusyYield::forThisThread().atYieldPoint()) {
    context_.io_busy_yields.fetch_add(1, std::memory_order_relaxed);
  }
}

void Connection::startTurn() {
  boost::asio::post(executor_, base::withMemory(turn_memory_, [self = shared_from_this()] {
                      self->turn_posted_ = false;
                      if (!self->closed_) self->takeTurn();  // may queue its next turn
                      self->turns_.finished();
                    }));
}

Connection::TurnEnd Connection::processBuffered() {
  static_assert(kRequestsPerTurn <= kMaxPrefetchLookups);
  if (closing_ == Closing::kNo && mayRead()) {
    prefetchReads(reader_.unread(), session_, context_, kRequestsPerTurn);
  }
  for (size_t executed = 0; closing_ == Closing::kNo && mayRead(); ++executed) {
    if (executed == kRequestsPerTurn) return TurnEnd::kBudgetSpent;
    protocol::PacketReader::Next next = reader_.next();
    switch (next.result) {
      case protocol::PacketReader::Result::kNeedMore:
        return TurnEnd::kDone;
      case protocol::PacketReader::Result::kPacket:
        // Unordered: a SyncWrite resolved meanwhile, on another thread, is
        // answered before this request is executed (connection.h, takeTurn()).
        if (unordered_pending_ != 0 && inbox_filled_.load(std::memory_order_acquire)) {
          fillFromInbox(/*drain=*/false);
          // An answer a client without XERROR is not sent closes it instead:
          // this request is dropped unexecuted, as any read after closing.
          if (closing_ != Closing::kNo) return TurnEnd::kDone;
        }
        handlePacket(next.packet);
        break;
      case protocol::PacketReader::Result::kBadMagic:
        logLine(absl::StrCat("connection ", peer_, ": bad magic 0x",
                             absl::Hex(next.header.magic, absl::kZeroPad2), ", closing it"));
        closing_ = Closing::kAfterReady;
        return TurnEnd::kDone;
      case protocol::PacketReader::Result::kBadLengths:
        logLine(absl::StrCat("connection ", peer_, ": request header's framing extras (",
                             next.header.framing_extras_length, ") + extras (",
                             next.header.extras_length, ") + key (", next.header.key_length,
                             ") exceed its body length ", next.header.body_length, ", closing it"));
        closing_ = Closing::kAfterReady;
        return TurnEnd::kDone;
      case protocol::PacketReader::Result::kTooBig: {
        logLine(absl::StrCat("connection ", peer_, ": request body of ", next.header.body_length,
                             " bytes is over max_packet_size ", context_.max_packet_size,
                             ", closing it"));
        const bool direct = slots_.empty();
        if (direct) takeUnorderedAnswers();
        std::string& out = direct ? ready_out_ : behind_out_;
        const size_t before = out.size();
        protocol::appendErrorResponse(
            out, next.header.opcode, protocol::Status::kTooBig, next.header.opaque,
            absl::StrCat("request body of ", next.header.body_length,
                         " bytes is over max_packet_size ", context_.max_packet_size));
        if (direct) {
          ++ready_queued_;
        } else {
          slots_.push_back(AnswerSlot::inlineAnswer(out.size() - before));
        }
        noteUnsent(out.size() - before);
        closing_ = Closing::kAfterReady;
        return TurnEnd::kDone;
      }
    }
  }
  return closing_ == Closing::kNo ? TurnEnd::kAtBound : TurnEnd::kDone;
}

void Connection::handlePacket(const protocol::Packet& packet) {
  protocol::ParseResult parsed = protocol::parseRequest(packet);
  if (session_.unordered) {
    if (!parsed.ok()) {
      const size_t before = unordered_out_.size();
      protocol::appendParseError(unordered_out_, parsed, session_.json);
      if (!session_.xerror && !remapForClientWithoutXerror(unordered_out_, before)) {
        closing_ = Closing::kAfterReady;
        return;
      }
      noteUnsent(unordered_out_.size() - before);
      ++unordered_queued_;
      return;
    }
    handleUnordered(parsed.request);
    return;
  }
  // While no answer is owed, this one goes straight to ready_out_; behind
  // one, to behind_out_ with a kInline slot. A deferred answer always takes a
  // slot, whose sequence number is known before the dispatcher runs: nothing
  // adds or removes slots meanwhile (fills are posted to this I/O thread).
  const bool direct = slots_.empty();
  if (direct) takeUnorderedAnswers();
  const uint64_t seq = first_slot_seq_ + slots_.size();  // the slot it takes
  std::string& out = direct ? ready_out_ : behind_out_;
  const size_t before = out.size();
  Disposition disposition = Disposition::kAnswered;
  LateAnswerShape shape;
  if (parsed.ok()) {
    disposition = dispatcher_.execute(
        parsed.request, session_, out, [this, seq] { return LateReply(this, seq); }, shape);
  } else {
    protocol::appendParseError(out, parsed, session_.json);
    if (!session_.xerror && !remapForClientWithoutXerror(out, before)) {
      disposition = Disposition::kDisconnect;
    }
  }
  if (disposition == Disposition::kDisconnect) {
    // Nothing was appended (xerror_remap.h): send what is ready, then close.
    closing_ = Closing::kAfterReady;
    return;
  }
  if (disposition == Disposition::kDeferred) {
    // A deferring handler appends nothing (dispatcher.h).
    assert(out.size() == before);
    slots_.push_back(AnswerSlot::pending(shape));  // not ready until fill()
    noteDeferred();
    return;
  }
  const size_t answered = out.size() - before;
  if (direct) {
    ++ready_queued_;
  } else {
    slots_.push_back(AnswerSlot::inlineAnswer(answered));
  }
  noteUnsent(answered);
  if (disposition == Disposition::kClose) closing_ = Closing::kAfterAll;
}

void Connection::takeUnorderedAnswers() {
  if (unordered_out_.empty()) return;
  ready_out_.append(unordered_out_);
  ready_queued_ += unordered_queued_;
  unordered_out_.clear();
  unordered_queued_ = 0;
}

void Connection::handleUnordered(const protocol::Request& request) {
  const size_t before = unordered_out_.size();
  std::optional<uint32_t> index;  // taken by defer()
  LateAnswerShape shape;
  const Disposition disposition = dispatcher_.execute(
      request, session_, unordered_out_,
      [this, &index] {
        index = takeUnorderedIndex();
        return LateReply(this, kUnorderedTicket | *index);
      },
      shape);
  noteUnsent(unordered_out_.size() - before);
  if (index.has_value()) {
    if (disposition == Disposition::kDeferred) {
      unordered_shapes_[*index] = shape;
      noteDeferred();
    } else {
      unordered_free_.push_back(*index);
    }
  }
  switch (disposition) {
    case Disposition::kAnswered:
      if (unordered_out_.size() != before) ++unordered_queued_;
      break;
    case Disposition::kClose:
      ++unordered_queued_;
      closing_ = Closing::kAfterAll;
      break;
    case Disposition::kDisconnect:
      closing_ = Closing::kAfterReady;
      break;
    case Disposition::kDeferred:
      ++unordered_pending_;
      break;
  }
}

void Connection::sendFrontSlot() {
  const AnswerSlot& slot = slots_.front();
  switch (slot.state()) {
    case AnswerSlot::State::kInline:
      write_buffer_.append(behind_out_, behind_sent_, slot.size());
      behind_sent_ += slot.size();
      break;
    case AnswerSlot::State::kResolved:
      slot.appendResolved(write_buffer_);
      break;
    case AnswerSlot::State::kOutOfLine: {
      const auto it = out_of_line_.find(first_slot_seq_);
      assert(it != out_of_line_.end());
      write_buffer_.append(it->second);
      out_of_line_.erase(it);
      break;
    }
    case AnswerSlot::State::kPending:
      assert(false && "a pending slot is not sent");
      return;
  }
  slots_.pop_front();
  ++first_slot_seq_;
}

void Connection::noteUnsent(size_t bytes) {
  unsent_bytes_ += bytes;
  if (unsent_bytes_ <= unsent_high_) return;
  unsent_high_ = unsent_bytes_;
  uint64_t seen = context_.send_queue_max_bytes.load(std::memory_order_relaxed);
  while (seen < unsent_high_ && !context_.send_queue_max_bytes.compare_exchange_weak(
                                    seen, unsent_high_, std::memory_order_relaxed)) {
  }
}

void Connection::flush() {
  if (closed_ || writing_) return;
  // A producer's messages go behind the answers already decided; a DCP
  // connection defers none (it sends no SyncWrites), so none is owed.
  if (session_.dcp_producer && slots_.empty() && unordered_out_.empty() &&
      closing_ == Closing::kNo) {
    const size_t added = session_.dcp_producer->fill(ready_out_, kDcpFillBytes);
    if (added != 0) noteUnsent(added);
  }
  // One reservation for the whole batch rather than a doubling series. With
  // glibc's malloc (the sanitizer builds', and an embedder's unless they
  // choose otherwise) each large allocation consolidates its fast bins, which
  // a burst of freed answers has just filled (perf: 10% of a timeout storm's
  // CPU, before syncwrite-server linked tcmalloc).
  size_t total = write_buffer_.size() + ready_out_.size() + unordered_out_.size();
  for (auto it = slots_.begin(); it != slots_.end() && it->ready(); ++it) total += it->size();
  write_buffer_.reserve(total);
  // ready_out_ first: every answer in it comes before every slot.
  write_buffer_.append(ready_out_);
  ready_out_.clear();
  if (ready_out_.capacity() > kKeepWriteBufferBytes) std::string().swap(ready_out_);
  ready_queued_ = 0;
  while (!slots_.empty() && slots_.front().ready()) sendFrontSlot();
  // What is left of behind_out_ belongs to slots behind a pending one.
  if (behind_sent_ == behind_out_.size()) {
    behind_out_.clear();
    behind_sent_ = 0;
    if (behind_out_.capacity() > kKeepWriteBufferBytes) std::string().swap(behind_out_);
  } else if (behind_sent_ > behind_out_.size() / 2) {
    behind_out_.erase(0, behind_sent_);  // O(what is left), at most as much as was sent
    behind_sent_ = 0;
  }
  if (!unordered_out_.empty()) {
    write_buffer_.append(unordered_out_);
    unordered_out_.clear();
  }
  unordered_queued_ = 0;
  if (write_buffer_.empty()) {
    maybeClose();
    resumeReadIfPaused();
    return;
  }
  writing_ = true;
  write_offset_ = 0;
  writeSome();
}

void Connection::resumeReadIfPaused() {
  if (!read_paused_ || closed_ || closing_ != Closing::kNo || writing_ || !mayRead()) return;
  read_paused_ = false;
  // Through the TurnQueue, as any turn that reads: flush() runs inside drains
  // and turns, and a read turn started here would bypass the queue.
  if (!turn_posted_) queueTurn();
}

void Connection::writeSome() {
  socket_.async_write_some(
      boost::asio::buffer(write_buffer_.data() + write_offset_,
                          write_buffer_.size() - write_offset_),
      base::withMemory(write_memory_, [self = shared_from_this()](
                                          const boost::system::error_code& error, size_t bytes) {
        self->onWritten(error, bytes);
      }));
}

void Connection::onWritten(const boost::system::error_code& error, size_t bytes) {
  if (closed_) {
    writing_ = false;
    return;
  }
  if (error) {
    writing_ = false;
    close();
    return;
  }
  // Each part the kernel took is progress: a slow reader of a big answer is
  // not a stalled one.
  noteProgress();
  unsent_bytes_ -= bytes;
  write_offset_ += bytes;
  if (write_offset_ < write_buffer_.size()) {
    writeSome();
    return;
  }
  writing_ = false;
  write_buffer_.clear();
  if (write_buffer_.capacity() > kKeepWriteBufferBytes) std::string().swap(write_buffer_);
  if (read_paused_ && mayRead()) {
    read_paused_ = false;
    if (!turn_posted_) {
      takeTurn();  // flushes
      return;
    }
  }
  flush();
}

void Connection::maybeClose() {
  if (closed_ || writing_) return;
  const bool answered_all =
      slots_.empty() && ready_out_.empty() && unordered_pending_ == 0 && unordered_out_.empty();
  const bool done = closing_ == Closing::kAfterAll ? answered_all
                    : closing_ == Closing::kAfterReady
                        ? (slots_.empty() || !slots_.front().ready()) && ready_out_.empty() &&
                              unordered_out_.empty()
                        : false;
  if (done) close();
}

void Connection::armIdleTimer(std::chrono::steady_clock::time_point at) {
  idle_timer_.expires_at(at);
  idle_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    self->onIdleTimer(error);
  });
}

void Connection::onIdleTimer(const boost::system::error_code& error) {
  assert(executor_.running_in_this_thread());
  if (error || closed_) return;
  const std::chrono::seconds idle_time = context_.connection_idle_time;
  const auto now = std::chrono::steady_clock::now();
  if (now < last_progress_ + idle_time) {
    armIdleTimer(last_progress_ + idle_time);  // progress since the timer was armed
    return;
  }
  if (writing_) {
    context_.stalled_connections_closed.fetch_add(1, std::memory_order_relaxed);
    logLine(absl::StrCat("connection ", peer_, ": read none of its ",
                         write_buffer_.size() - write_offset_, " unsent answer bytes in ",
                         idle_time.count(), " s (connection_idle_time), closing it"));
    close();
    return;
  }
  const bool answer_owed = !slots_.empty() || !ready_out_.empty() || unordered_pending_ > 0;
  // A turn waiting in the TurnQueue has requests to execute: not idle.
  if (answer_owed || turn_posted_ || !session_.dcp_replica.empty()) {
    armIdleTimer(now + idle_time);
    return;
  }
  context_.idle_connections_closed.fetch_add(1, std::memory_order_relaxed);
  logLine(absl::StrCat("connection ", peer_, ": idle for ", idle_time.count(),
                       " s (connection_idle_time), closing it"));
  close();
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  if (session_.dcp_producer) {
    session_.dcp_producer->stop();  // its cursors go: the log behind them may be expelled
    session_.dcp_producer.reset();
  }
  gone_.store(true, std::memory_order_release);
  idle_timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  slots_.clear();
  std::string().swap(behind_out_);
  behind_sent_ = 0;
  out_of_line_.clear();
  std::string().swap(ready_out_);
  ready_queued_ = 0;
  std::vector<LateAnswerShape>().swap(unordered_shapes_);
  std::vector<uint32_t>().swap(unordered_free_);
  on_closed_(this);
}

}  // namespace syncwrite::server
