// SimulatedReplica: a replica node the server acknowledges for itself, one per
// replica a bucket's config lists under "simulated_replicas".
//
// Stream: given the vbucket map, it reads every vbucket's log through a cursor
// of its own ("replica:<name>", a LogCursorReader) on its I/O thread, when the
// bucket marks a vbucket written (markDirty: a prepare at once, anything else
// on the stream's tick). Each read of a vbucket that passed a prepare is
// received as one ack of the last seqno it passed (acks are cumulative), sent
// to the durability layer `ack_delay` plus a random 0..`ack_jitter` later, as a
// real replica's DCP_SEQNO_ACKNOWLEDGED. Without a map (unit tests) there is no
// cursor, and onPrepare() is called directly.
//
// Faults (replica_faults.h), at run time: the delay may change, for the acks
// held too (each is then due the new delay after its prepare was received);
// the jitter, for the prepares that follow; and a paused replica keeps
// receiving and holds its acks, sending them in order as each falls due once
// resumed.
//
// Acks: one timer per replica, armed for the head of a FIFO of (due, vbid,
// seqno) kept in non-decreasing due order (a due time earlier than the last
// is raised to it), so one replica's acks are never reordered; a head already
// due is posted instead. A wake-up sends every due ack, the highest seqno per
// vbucket, and notifies the writes they commit once per turn of acks (one
// hand-off per connection). A turn runs about kAckSlice, then posts the rest
// behind the handlers already queued. The FIFO and the timer live on a strand
// of the given io_context, which one I/O thread runs (the stream's reads are
// posted to the io_context itself), so the acks run on that thread.
// docs/benchmarks.md, "Durable SETs: one hand-off per turn of acks".
//
// Thread-safety: every member may be called from any thread. Lifetime: the
// acknowledger and the io_context must outlive this object; stop() must have
// been called and the io_context must have stopped running before it is
// destroyed (handlers capture `this`).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "base/fifo.h"
#include "base/handler_memory.h"
#include "durability/resolved_writes.h"
#include "vbucket/item.h"
#include "vbucket/log_cursor_reader.h"
#include "vbucket/vbucket_map.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {

class SimulatedReplica {
 public:
  // How long one turn of sending due acks may run before it yields the I/O
  // thread (the default of durability_timeout_slice, for the same reason).
  static constexpr std::chrono::milliseconds kAckSlice{2};
  // A turn reads the clock after this many acks, or sooner once the acks
  // since the last read resolved this many writes: a turn may run past
  // kAckSlice by up to this many acks that each resolved fewer writes. Not a
  // bound on time: an ack whose commits were all answered already (at their
  // deadline, behind the head) adds nothing to the batch, however long its
  // prefix.
  static constexpr size_t kAcksPerClockRead = 16;
  // Writes the turn's batch keeps room for between turns (64 KiB); a turn
  // that grew it past this, a storm's commits, frees it at its end.
  static constexpr size_t kAckedKept = 1024;

  // Called with (vbid, node name, prepared seqno, batch) when an ack is due.
  // The writes an ack resolves go into the batch, which the replica notifies
  // once per turn of acks (sendDueAcks), after the last ack of the turn: a
  // connection whose answers several acks resolve gets them in one hand-off.
  using Acknowledge = std::function<void(vbucket::Vbid, const std::string&, vbucket::Seqno,
                                         durability::ResolvedWrites&)>;

  SimulatedReplica(std::string name, std::chrono::milliseconds ack_delay,
                   std::chrono::milliseconds ack_jitter, boost::asio::io_context& io,
                   Acknowledge acknowledge, vbucket::VBucketMap* map = nullptr);
  ~SimulatedReplica();
  SimulatedReplica(const SimulatedReplica&) = delete;
  SimulatedReplica& operator=(const SimulatedReplica&) = delete;

  const std::string& name() const noexcept { return name_; }
  std::chrono::milliseconds ackDelay() const noexcept {
    return std::chrono::milliseconds(ack_delay_ms_.load(std::memory_order_relaxed));
  }
  std::chrono::milliseconds ackJitter() const noexcept {
    return std::chrono::milliseconds(ack_jitter_ms_.load(std::memory_order_relaxed));
  }

  // How often the stream reads what nobody waits for while it keeps coming
  // (those reads only let the log behind the cursor be expelled).
  // docs/benchmarks.md, "Quieter ticks under plain writes".
  static constexpr std::chrono::milliseconds kStreamTick{10};

  // The bucket queued something in `vbid`: the stream reads it (with a map;
  // without one this does nothing). A prepare (`prepare`) is read at once:
  // the first mark since the last read posts a read (postRead), later ones
  // cost two relaxed loads. Anything else (a plain write, a commit, an
  // abort) is read at the stream's next read: while records keep coming the
  // stream reads every kStreamTick on its own, so a plain write costs no
  // post to the replica's I/O thread (docs/benchmarks.md, "Syscalls per
  // request"); from idle, the first one posts a read as a prepare does.
  void markDirty(vbucket::Vbid vbid, bool prepare);

  // The stream's distance from the head of the logs (0 without a map).
  // O(vbuckets).
  size_t itemsQueued() const { return stream_ ? stream_->itemsQueued() : 0; }

  // Prepare `seqno` of `vbid` was received: acknowledge it ack_delay
  // (+ jitter) from now, or later if paused. Asynchronous (a post to the
  // strand); never blocks.
  void onPrepare(vbucket::Vbid vbid, vbucket::Seqno seqno);

  // The delay from each prepare's arrival to its ack, for the acks held too.
  // Asynchronous.
  void setAckDelay(std::chrono::milliseconds delay);
  // For the prepares that follow.
  void setAckJitter(std::chrono::milliseconds jitter) noexcept;

  // Paused: holds every ack. Resumed: acknowledges what it holds as each ack
  // falls due (at once, for those already due), in order. Asynchronous.
  void setPaused(bool paused);

  // Calls `fn` with the number of acks held (queued, not yet sent) on the
  // strand, after every call made before this one has taken effect. For tests.
  void countPending(std::function<void(size_t)> fn);

  // Drops what is pending and acknowledges nothing more. Asynchronous.
  void stop();

 private:
  struct Pending {
    std::chrono::steady_clock::time_point received;
    std::chrono::microseconds jitter;
    std::chrono::steady_clock::time_point due;  // received + delay + jitter, or the one ahead's
    vbucket::Vbid vbid;
    vbucket::Seqno seqno;
  };

  // Queues the ack of a prepare received at `received`. On the strand.
  void receive(vbucket::Vbid vbid, vbucket::Seqno seqno,
               std::chrono::steady_clock::time_point received, int64_t jitter_ms);
  // Posts readStream() to the io_context, from any thread, in read_memory_.
  void postRead();
  void readStream();    // on the strand's thread
  void onStreamTick();  // on the strand
  void armForHead();    // on the strand's thread
  void onTimer();       // on the strand's thread
  // Sends due acks from next_due_ for up to kAckSlice; on the strand.
  void sendDueAcks();
  void redue(std::chrono::milliseconds delay);  // on the strand

  const std::string name_;
  std::atomic<int64_t> ack_delay_ms_;
  std::atomic<int64_t> ack_jitter_ms_;
  const Acknowledge acknowledge_;
  // The writes one turn of acks resolved; notified at the turn's end. On
  // the strand (kept for its capacity).
  durability::ResolvedWrites acked_;
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;
  Strand strand_;
  // By the strand's concrete type: through the default any_io_executor each
  // wait copied the strand to the heap (Boost 1.74). Used on the strand only.
  boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                    boost::asio::wait_traits<std::chrono::steady_clock>, Strand>
      timer_;
  std::unique_ptr<vbucket::LogCursorReader> stream_;  // null without a map
  // postRead()'s and armForHead()'s posts, shared with them: one may still
  // be queued when this object is destroyed (base/handler_memory.h).
  const std::shared_ptr<base::HandlerMemory> read_memory_ = std::make_shared<base::HandlerMemory>();
  const std::shared_ptr<base::HandlerMemory> ack_memory_ = std::make_shared<base::HandlerMemory>();
  // The stream's tick, on the strand; same type as timer_.
  boost::asio::basic_waitable_timer<std::chrono::steady_clock,
                                    boost::asio::wait_traits<std::chrono::steady_clock>, Strand>
      stream_timer_;
  // True while the tick is armed: a quiet mark then wakes nobody (the tick
  // reads it). Written on the strand, read by markDirty() from any thread.
  std::atomic<bool> ticking_{false};

  // On the strand's one thread only (the strand's handlers, readStream()).
  // Keeps room for 1024 (40 KiB) once emptied: under steady load the queue
  // empties between acks, and freeing it each time would allocate again.
  base::Fifo<Pending, 1024> pending_;
  // onTimer()'s, reused: the highest due seqno by vbid (0: none), and the
  // vbids that have one, in the order first seen.
  std::vector<vbucket::Seqno> highest_due_;
  std::vector<vbucket::Vbid> due_vbuckets_;
  size_t next_due_ = 0;       // due_vbuckets_[next_due_..] are yet to be sent
  bool acks_posted_ = false;  // a sendDueAcks() turn is posted
  // Bumped by each armForHead(): a wake-up of an older arming does nothing.
  uint64_t arm_generation_ = 0;
  std::chrono::steady_clock::time_point last_due_{};
  std::minstd_rand rng_;
  bool armed_ = false;
  bool paused_ = false;
  bool stopped_ = false;
};

}  // namespace syncwrite::server
