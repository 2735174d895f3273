#include "server/simulated_replica.h"

#include <algorithm>
#include <utility>

#include <absl/container/flat_hash_map.h>
#include <boost/asio/post.hpp>

namespace syncwrite::server {

SimulatedReplica::SimulatedReplica(std::string name, std::chrono::milliseconds ack_delay,
                                   boost::asio::io_context& io, Acknowledge acknowledge)
    : name_(std::move(name)),
      ack_delay_(ack_delay),
      acknowledge_(std::move(acknowledge)),
      strand_(boost::asio::make_strand(io)),
      timer_(strand_) {}

void SimulatedReplica::onPrepare(vbucket::Vbid vbid, vbucket::Seqno seqno) {
  const auto due = std::chrono::steady_clock::now() + ack_delay_;
  boost::asio::post(strand_, [this, due, vbid, seqno] {
    if (stopped_) return;
    pending_.push_back(Pending{due, vbid, seqno});
    if (!armed_) armForHead();
  });
}

void SimulatedReplica::stop() {
  boost::asio::post(strand_, [this] {
    stopped_ = true;
    pending_.clear();
    timer_.cancel();
  });
}

void SimulatedReplica::armForHead() {
  armed_ = true;
  timer_.expires_at(pending_.front().due);
  timer_.async_wait([this](const boost::system::error_code&) { onTimer(); });
}

void SimulatedReplica::onTimer() {
  armed_ = false;
  if (stopped_) return;
  // Collect every due entry, one (highest) seqno per vbucket: acks are cumulative.
  const auto now = std::chrono::steady_clock::now();
  absl::flat_hash_map<vbucket::Vbid, vbucket::Seqno> acks;
  while (!pending_.empty() && pending_.front().due <= now) {
    const Pending& p = pending_.front();
    vbucket::Seqno& highest = acks[p.vbid];
    highest = std::max(highest, p.seqno);
    pending_.pop_front();
  }
  for (const auto& [vbid, seqno] : acks) acknowledge_(vbid, name_, seqno);
  if (!pending_.empty()) armForHead();
}

}  // namespace syncwrite::server
