// Connection's deferred answers (connection.h): a SyncWrite's answer owed,
// resolved on any thread into the inbox, drained on the I/O thread into its
// slot (ordered) or the unordered stream.
#include <cassert>
#include <memory>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>

#include "server/connection.h"
#include "server/metrics/op_counters.h"

namespace syncwrite::server {

void Connection::noteDeferred() {
  base::MutexLock lock(inbox_mutex_);
  if (++owed_ == 1) keepalive_ = shared_from_this();
}

uint32_t Connection::takeUnorderedIndex() {
  if (!unordered_free_.empty()) {
    const uint32_t index = unordered_free_.back();
    unordered_free_.pop_back();
    return index;
  }
  unordered_shapes_.emplace_back();
  return static_cast<uint32_t>(unordered_shapes_.size() - 1);
}

void Connection::resolved(uint64_t ticket, const durability::Resolution& resolution) {
  // Declared first, destroyed last: when it holds the connection's last
  // owner, nothing below touches a member after it goes.
  std::shared_ptr<Connection> settled;
  std::shared_ptr<Connection> post;
  {
    base::MutexLock lock(inbox_mutex_);
    if (--owed_ == 0) settled = std::move(keepalive_);
    // A closed connection's answer goes nowhere: drop it here rather than
    // post it to an I/O thread that would drop it anyway.
    if (!gone_.load(std::memory_order_acquire)) {
      inbox_.push_back({ticket, resolution});
      inbox_filled_.store(true, std::memory_order_release);
      if (!drain_posted_) post = shared_from_this();
      drain_posted_ = true;
    }
  }
  // Aliasing: the queue owns this connection through its drain turn.
  if (post) drains_.push(std::shared_ptr<TurnQueue::Client>(std::move(post), &drain_turn_));
}

void Connection::DrainTurn::startTurn() {
  // In drain_memory_: one drain is posted at a time (drain_posted_).
  boost::asio::post(
      connection_.executor_,
      base::withMemory(connection_.drain_memory_, [self = connection_.shared_from_this()] {
        self->drainInbox();
        self->drains_.finished();
      }));
}

void Connection::drainInbox() {
  assert(executor_.running_in_this_thread());
  fillFromInbox(/*drain=*/true);
  flush();
  yieldIfBusy();
}

void Connection::fillFromInbox(bool drain) {
  {
    base::MutexLock lock(inbox_mutex_);
    if (drain) drain_posted_ = false;
    if (inbox_.empty()) return;
    draining_.swap(inbox_);
    inbox_filled_.store(false, std::memory_order_relaxed);
  }
  for (const LateAnswer& answer : draining_) {
    if ((answer.ticket & kUnorderedTicket) != 0) {
      fillUnordered(static_cast<uint32_t>(answer.ticket & ~kUnorderedTicket), answer.resolution);
    } else {
      fill(answer.ticket, answer.resolution);
    }
  }
  draining_.clear();
  // At most kMaxSlots answers are ever queued; a capacity kept per idle
  // connection is bounded, and released when a burst made it large.
  if (draining_.capacity() > kMaxSlots / 4) std::vector<LateAnswer>().swap(draining_);
}

namespace {

// One SyncWrite's answer, counted when it is built (metrics/op_counters.h).
void countLateAnswer(const LateAnswerShape& shape, const durability::Resolution& resolution) {
  metrics::OpCounters::count(
      static_cast<uint8_t>(shape.opcode),
      static_cast<uint16_t>(resolution.committed ? protocol::Status::kSuccess
                                                 : protocol::Status::kSyncWriteAmbiguous));
}

}  // namespace

void Connection::fillUnordered(uint32_t index, const durability::Resolution& resolution) {
  if (closed_) return;
  countLateAnswer(unordered_shapes_[index], resolution);
  --unordered_pending_;
  unordered_free_.push_back(index);
  if (!lateAnswerMayBeSent(unordered_shapes_[index], resolution)) {
    closing_ = Closing::kAfterReady;
    return;
  }
  const size_t before = unordered_out_.size();
  appendLateAnswer(unordered_out_, unordered_shapes_[index], resolution);
  noteUnsent(unordered_out_.size() - before);
  ++unordered_queued_;
  // Like draining_: what a burst grew is not kept by an idle connection.
  if (unordered_pending_ == 0 && unordered_shapes_.capacity() > kMaxSlots / 4) {
    std::vector<LateAnswerShape>().swap(unordered_shapes_);
    std::vector<uint32_t>().swap(unordered_free_);
  }
}

void Connection::fill(uint64_t slot_seq, const durability::Resolution& resolution) {
  if (closed_ || slot_seq < first_slot_seq_) return;
  AnswerSlot& slot = slots_[slot_seq - first_slot_seq_];
  if (slot.state() != AnswerSlot::State::kPending) return;  // answered already: never twice
  countLateAnswer(slot.shape(), resolution);
  if (!lateAnswerMayBeSent(slot.shape(), resolution)) {
    // The slot stays pending: the answers ahead of it leave, then the
    // connection closes.
    closing_ = Closing::kAfterReady;
    return;
  }
  if (!slot.resolve(resolution)) {
    std::string& bytes = out_of_line_[slot_seq];
    appendLateAnswer(bytes, slot.shape(), resolution);
    slot.markOutOfLine(bytes.size());
  }
  markReady(slot);
}

}  // namespace syncwrite::server
