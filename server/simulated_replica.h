// SimulatedReplica: a replica node the server acknowledges for itself.
//
// A bucket whose config lists a replica under "simulated_replicas" gets one of
// these per such replica. For each SyncWrite the bucket accepts it is told the
// prepare (onPrepare), and `ack_delay` later it acknowledges that prepare's
// seqno to the bucket's durability layer, as a real replica would with
// DCP_SEQNO_ACKNOWLEDGED once it had received the prepare.
//
// One steady_timer per replica, not per write: the delay is the same for
// every prepare, so due times arrive in order and a FIFO of (due, vbid,
// seqno) with the timer armed for its head is enough. (Two threads' calls
// can reach the strand in the other order than they read the clock; the
// entry behind is then acknowledged that much late, never early.) When the timer fires it
// acknowledges every entry that is due, keeping only the highest seqno per
// vbucket (acks are cumulative, so this loses nothing). The FIFO and the
// timer live on a strand of the server's io_context, so the acks run on the
// I/O threads; a commit's completion then only posts to its connection.
//
// Thread-safety: onPrepare() and stop() may be called from any thread.
// Lifetime: the acknowledger and the io_context must outlive this object;
// stop() must have been called and the io_context must have stopped running
// before it is destroyed (handlers capture `this`).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "vbucket/item.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {

class SimulatedReplica {
 public:
  // Called with (vbid, node name, prepared seqno) when an ack is due.
  using Acknowledge = std::function<void(vbucket::Vbid, const std::string&, vbucket::Seqno)>;

  SimulatedReplica(std::string name, std::chrono::milliseconds ack_delay,
                   boost::asio::io_context& io, Acknowledge acknowledge);
  SimulatedReplica(const SimulatedReplica&) = delete;
  SimulatedReplica& operator=(const SimulatedReplica&) = delete;

  const std::string& name() const noexcept { return name_; }
  std::chrono::milliseconds ackDelay() const noexcept { return ack_delay_; }

  // The bucket queued prepare `seqno` in `vbid`: acknowledge it ack_delay from
  // now. Asynchronous (a post to the strand); never blocks.
  void onPrepare(vbucket::Vbid vbid, vbucket::Seqno seqno);

  // Drops what is pending and acknowledges nothing more. Asynchronous.
  void stop();

 private:
  struct Pending {
    std::chrono::steady_clock::time_point due;
    vbucket::Vbid vbid;
    vbucket::Seqno seqno;
  };

  void armForHead();  // on the strand
  void onTimer();     // on the strand

  const std::string name_;
  const std::chrono::milliseconds ack_delay_;
  const Acknowledge acknowledge_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer timer_;  // used on the strand only

  // On the strand only.
  std::deque<Pending> pending_;
  bool armed_ = false;
  bool stopped_ = false;
};

}  // namespace syncwrite::server
