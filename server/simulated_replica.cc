#include "server/simulated_replica.h"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

namespace syncwrite::server {

SimulatedReplica::SimulatedReplica(std::string name, std::chrono::milliseconds ack_delay,
                                   std::chrono::milliseconds ack_jitter,
                                   boost::asio::io_context& io, Acknowledge acknowledge,
                                   vbucket::VBucketMap* map)
    : name_(std::move(name)),
      ack_delay_ms_(ack_delay.count()),
      ack_jitter_ms_(ack_jitter.count()),
      acknowledge_(std::move(acknowledge)),
      strand_(boost::asio::make_strand(io)),
      timer_(strand_),
      stream_timer_(strand_),
      rng_(static_cast<std::minstd_rand::result_type>(std::hash<std::string>{}(name_))) {
  if (map != nullptr)
    stream_ = std::make_unique<vbucket::LogCursorReader>(*map, "replica:" + name_);
}

SimulatedReplica::~SimulatedReplica() = default;

void SimulatedReplica::markDirty(vbucket::Vbid vbid, bool prepare) {
  if (!stream_) return;
  if (prepare) {
    if (stream_->markDirty(vbid)) postRead();
    return;
  }
  stream_->markDirtyQuietly(vbid);
  // seq_cst with onStreamTick()'s store then read: either the tick's read
  // sees this mark, or this sees the tick stopped and wakes the reader.
  if (!ticking_.load(std::memory_order_seq_cst) && stream_->claimWake()) postRead();
}

void SimulatedReplica::postRead() {
  // To the io_context, not through the strand: its one thread runs the
  // strand's handlers too (simulated_replica.h), and a post from another
  // thread to an idle strand queued an invoker besides the handler, from the
  // heap (0.08 allocations per durable write, and 0.06 more when the strand
  // re-queued it).
  boost::asio::post(strand_.get_inner_executor(),
                    base::withMemory(read_memory_, [this] { readStream(); }));
}

void SimulatedReplica::onStreamTick() {
  if (stopped_) return;
  // Marks from here on wake the reader themselves; the read below takes
  // those made before, and ticks on if it found any.
  ticking_.store(false, std::memory_order_seq_cst);
  readStream();
}

void SimulatedReplica::readStream() {
  // Stopped: it reads no more (the cursor stays where it is; the bucket is
  // going away).
  if (stopped_) return;
  const auto received = std::chrono::steady_clock::now();
  const int64_t jitter_ms = ack_jitter_ms_.load(std::memory_order_relaxed);
  constexpr size_t kBatch = 1024;
  bool read_any = false;
  // What a vbucket's read passed holds a prepare or not; no entry is read
  // (LogCursorReader::passDirty). One ack per vbucket per read, of the last
  // seqno passed, covers every prepare passed: acks are cumulative, as a
  // replica that has received a snapshot acks it whole. Reading each
  // prepare's seqno instead was a cache miss per write, on a line the
  // writer's thread had just written (0.3 us of the server's 5 per durable
  // SET at 4 x 32).
  const bool more = stream_->passDirty(
      kBatch, [&](vbucket::Vbid vbid, const vbucket::CheckpointManager::Skimmed& passed) {
        read_any = true;
        if (passed.prepare) receive(vbid, passed.last_seqno, received, jitter_ms);
      });
  // A batch or more read: read on, after what else is queued on the strand.
  if (more) boost::asio::post(strand_, [this] { readStream(); });
  // Records are coming: read what nobody waits for on the tick (markDirty()).
  // ticking_ is true exactly while the tick is armed; only the strand
  // writes it.
  if (read_any && !ticking_.load(std::memory_order_relaxed)) {
    ticking_.store(true, std::memory_order_seq_cst);
    stream_timer_.expires_after(kStreamTick);
    stream_timer_.async_wait([this](const boost::system::error_code& error) {
      if (error == boost::asio::error::operation_aborted) return;
      onStreamTick();
    });
  }
}

void SimulatedReplica::onPrepare(vbucket::Vbid vbid, vbucket::Seqno seqno) {
  const auto received = std::chrono::steady_clock::now();
  const int64_t jitter_ms = ack_jitter_ms_.load(std::memory_order_relaxed);
  boost::asio::post(strand_, [this, received, jitter_ms, vbid, seqno] {
    if (stopped_) return;
    receive(vbid, seqno, received, jitter_ms);
  });
}

void SimulatedReplica::receive(vbucket::Vbid vbid, vbucket::Seqno seqno,
                               std::chrono::steady_clock::time_point received, int64_t jitter_ms) {
  std::chrono::microseconds jitter{0};
  if (jitter_ms > 0) {
    // Uniform in 0..jitter, to the microsecond.
    jitter = std::chrono::microseconds(rng_() % static_cast<uint64_t>(jitter_ms * 1000 + 1));
  }
  // Never before the entry ahead of it: one replica's acks stay in order.
  const auto due = std::max(received + ackDelay() + jitter, last_due_);
  last_due_ = due;
  pending_.push_back(Pending{received, jitter, due, vbid, seqno});
  if (!armed_ && !paused_) armForHead();
}

void SimulatedReplica::setAckDelay(std::chrono::milliseconds delay) {
  ack_delay_ms_.store(delay.count(), std::memory_order_relaxed);
  boost::asio::post(strand_, [this, delay] { redue(delay); });
}

void SimulatedReplica::redue(std::chrono::milliseconds delay) {
  if (stopped_) return;
  std::chrono::steady_clock::time_point last{};
  for (Pending& p : pending_) {
    p.due = std::max(p.received + delay + p.jitter, last);
    last = p.due;
  }
  last_due_ = last;
  // Re-armed for the new head due time (expires_at cancels the old wait).
  if (!paused_ && !pending_.empty()) armForHead();
}

void SimulatedReplica::setAckJitter(std::chrono::milliseconds jitter) noexcept {
  ack_jitter_ms_.store(jitter.count(), std::memory_order_relaxed);
}

void SimulatedReplica::setPaused(bool paused) {
  boost::asio::post(strand_, [this, paused] {
    paused_ = paused;
    // Paused: a timer already armed fires and finds it paused. Resumed: the
    // due acks a pause interrupted go first, then it is armed for what it holds.
    if (paused_ || stopped_) return;
    sendDueAcks();
    if (!armed_ && !pending_.empty()) armForHead();
  });
}

void SimulatedReplica::countPending(std::function<void(size_t)> fn) {
  boost::asio::post(strand_, [this, fn = std::move(fn)] {
    fn(pending_.size() + (due_vbuckets_.size() - next_due_));
  });
}

void SimulatedReplica::stop() {
  boost::asio::post(strand_, [this] {
    stopped_ = true;
    pending_.clear();
    for (size_t i = next_due_; i < due_vbuckets_.size(); ++i) highest_due_[due_vbuckets_[i]] = 0;
    due_vbuckets_.clear();
    next_due_ = 0;
    timer_.cancel();
    stream_timer_.cancel();
  });
}

void SimulatedReplica::armForHead() {
  armed_ = true;
  const uint64_t generation = ++arm_generation_;
  const auto due = pending_.front().due;
  if (due <= std::chrono::steady_clock::now()) {
    // Already due (ack_delay_ms 0, or late): next on the strand's thread,
    // without a timer, whose arming costs a timerfd update and a reactor
    // wake-up. To the io_context in ack_memory_, as postRead() does: through
    // the strand each cost an allocation or two.
    boost::asio::post(strand_.get_inner_executor(),
                      base::withMemory(ack_memory_, [this, generation] {
                        if (generation == arm_generation_) onTimer();
                      }));
    return;
  }
  timer_.expires_at(due);
  timer_.async_wait([this, generation](const boost::system::error_code& ec) {
    // Cancelled by stop(), or superseded by a later arming: nothing to do.
    if (ec == boost::asio::error::operation_aborted || generation != arm_generation_) return;
    onTimer();
  });
}

void SimulatedReplica::onTimer() {
  armed_ = false;
  if (stopped_ || paused_) return;  // held; setPaused(false) re-arms
  // Collect every due entry, one (highest) seqno per vbucket: acks are cumulative.
  const auto now = std::chrono::steady_clock::now();
  while (!pending_.empty() && pending_.front().due <= now) {
    const Pending& p = pending_.front();
    if (p.vbid >= highest_due_.size()) highest_due_.resize(size_t{p.vbid} + 1, 0);
    vbucket::Seqno& highest = highest_due_[p.vbid];
    if (highest == 0) due_vbuckets_.push_back(p.vbid);
    highest = std::max(highest, p.seqno);
    pending_.pop_front();
  }
  sendDueAcks();
  if (!pending_.empty()) armForHead();
}

void SimulatedReplica::sendDueAcks() {
  // Held while paused (setPaused(false) sends them). Neither flag changes
  // inside the loop: setPaused() and stop() post to this strand.
  if (stopped_ || paused_) return;
  const auto start = std::chrono::steady_clock::now();
  // The clock is read once the acks since the last read, or the writes they
  // resolved, reach kAcksPerClockRead: an ack commits one write or a few,
  // and a clock read per ack was 1% of the server's CPU at 4 x 32 durable SETs.
  size_t acks_unclocked = 0;
  size_t clocked_batch = acked_.size();
  while (next_due_ < due_vbuckets_.size()) {
    const vbucket::Vbid vbid = due_vbuckets_[next_due_++];
    acknowledge_(vbid, name_, std::exchange(highest_due_[vbid], 0), acked_);
    if (++acks_unclocked < kAcksPerClockRead && acked_.size() - clocked_batch < kAcksPerClockRead) {
      continue;
    }
    acks_unclocked = 0;
    clocked_batch = acked_.size();
    if (next_due_ < due_vbuckets_.size() && std::chrono::steady_clock::now() - start >= kAckSlice) {
      acked_.notify();
      // Each ack may have committed a long prefix on this I/O thread: let
      // the handlers queued meanwhile (other connections) run first.
      if (!acks_posted_) {
        acks_posted_ = true;
        boost::asio::post(strand_, [this] {
          acks_posted_ = false;
          sendDueAcks();
        });
      }
      return;
    }
  }
  due_vbuckets_.clear();
  next_due_ = 0;
  acked_.notify();
  // A resumed replica's turn may have committed a whole held prefix.
  acked_.shrinkIfAbove(kAckedKept);
}

}  // namespace syncwrite::server
