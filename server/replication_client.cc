#include "server/replication_client.h"

#include <algorithm>
#include <array>
#include <utility>

#include <absl/strings/str_cat.h>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "server/log.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/dcp_messages.h"
#include "server/protocol/request_encoder.h"

namespace syncwrite::server {
namespace {

// A stream's opaque: its STREAM_REQ's, which every message of it carries.
constexpr uint32_t kStreamOpaqueBase = 0x10000;
// A CLOSE_STREAM's opaque.
constexpr uint32_t kCloseOpaqueBase = 0x20000;

}  // namespace

ReplicationClient::ReplicationClient(boost::asio::io_context& io, Options options)
    : io_(io),
      options_(std::move(options)),
      socket_(io),
      retry_timer_(io),
      vbuckets_(options_.vbuckets.begin(), options_.vbuckets.end()) {}

void ReplicationClient::start() {
  boost::asio::post(io_, [self = shared_from_this()] { self->connect(); });
}

void ReplicationClient::stop() {
  boost::asio::post(io_, [self = shared_from_this()] {
    self->stopped_ = true;
    self->retry_timer_.cancel();
    self->closeSocket();
  });
}

void ReplicationClient::ackPersisted(vbucket::Vbid vbid, vbucket::Seqno hps) {
  boost::asio::post(io_, [self = shared_from_this(), vbid, hps] {
    if (self->streaming_ && self->streams_.contains(vbid)) self->sendAck(vbid, hps);
  });
}

void ReplicationClient::connect() {
  if (stopped_) return;
  const absl::StatusOr<uint16_t> port = resolvePort(options_.active);
  if (!port.ok()) {
    fail(absl::StrCat("node '", options_.active.name,
                      "' has no address yet: ", std::string(port.status().message())));
    return;
  }
  boost::system::error_code error;
  const auto address = boost::asio::ip::make_address(options_.active.host, error);
  if (error) {
    fail(absl::StrCat("node '", options_.active.name, "': host '", options_.active.host,
                      "' is not an IP address (", error.message(), ")"));
    return;
  }
  const uint64_t generation = generation_;
  socket_.async_connect(
      boost::asio::ip::tcp::endpoint(address, *port),
      [self = shared_from_this(), generation](const boost::system::error_code& e) {
        if (self->generation_ != generation || self->stopped_) return;
        if (e) {
          self->fail(absl::StrCat("cannot connect to node '", self->options_.active.name, "' (",
                                  self->options_.active.host, "): ", e.message()));
          return;
        }
        boost::system::error_code ignored;
        self->socket_.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
        self->connects_.fetch_add(1, std::memory_order_relaxed);
        self->sendHandshake();
        self->doRead();
      });
}

void ReplicationClient::sendHandshake() {
  std::string out;
  uint32_t opaque = 1;
  const auto step = [&](const std::string& what) {
    awaiting_[opaque] = what;
    return opaque++;
  };
  const std::array<protocol::Feature, 1> features{protocol::Feature::kXerror};
  protocol::appendHello(out, step("HELLO"), "syncwrite-replica", features);
  if (!options_.user.empty()) {
    protocol::appendSaslPlain(out, step("SASL_AUTH PLAIN as " + options_.user), options_.user,
                              options_.password);
  }
  const std::string& bucket = options_.bucket->name();
  protocol::appendSelectBucket(out, step("SELECT_BUCKET " + bucket), bucket);
  const std::string name =
      absl::StrCat("replication:", options_.active.name, "->", options_.this_node, ":", bucket);
  const std::string consumer = nlohmann::json{{"consumer_name", options_.this_node}}.dump();
  protocol::appendDcpOpen(out, step("DCP_OPEN " + name), name, protocol::kDcpOpenProducer,
                          consumer);
  protocol::appendDcpControl(out, step("DCP_CONTROL enable_sync_writes"), "enable_sync_writes",
                             "true");
  protocol::appendDcpControl(out, step("DCP_CONTROL consumer_name"), "consumer_name",
                             options_.this_node);
  protocol::appendDcpControl(out, step("DCP_CONTROL connection_buffer_size"),
                             "connection_buffer_size", std::to_string(kBufferBytes));
  for (vbucket::Vbid vbid : vbuckets_) appendStreamRequest(out, vbid);
  send(out);
}

void ReplicationClient::appendStreamRequest(std::string& out, vbucket::Vbid vbid) {
  // Promoted here since (or made dead): not streamed from this node.
  if (options_.bucket->vbuckets().at(vbid).state() != vbucket::VBucketState::kReplica) return;
  const vbucket::VBucket& vb = options_.bucket->vbuckets().at(vbid);
  const vbucket::Seqno start = vb.highSeqno();
  const uint32_t stream_opaque = kStreamOpaqueBase + vbid;
  awaiting_[stream_opaque] = absl::StrCat("DCP_STREAM_REQ vbucket ", vbid, " from ", start);
  // The history it holds (its failover table, its active's when it last
  // streamed), and the snapshot as whole up to its high seqno.
  protocol::appendStreamRequest(out, {.opaque = stream_opaque,
                                      .vbucket = vbid,
                                      .start_seqno = start,
                                      .vbucket_uuid = vb.failovers().latestUuid(),
                                      .snap_start_seqno = start,
                                      .snap_end_seqno = start});
}

void ReplicationClient::addVbucket(vbucket::Vbid vbid) {
  boost::asio::post(io_, [self = shared_from_this(), vbid] {
    if (!self->vbuckets_.insert(vbid).second || !self->streaming_) return;
    self->dropped_.erase(vbid);
    std::string out;
    self->appendStreamRequest(out, vbid);
    self->send(out);
  });
}

void ReplicationClient::removeVbucket(vbucket::Vbid vbid) {
  boost::asio::post(io_, [self = shared_from_this(), vbid] {
    if (self->vbuckets_.erase(vbid) == 0) return;
    if (self->streams_.erase(vbid) != 0) {
      self->streams_open_.store(self->streams_.size(), std::memory_order_relaxed);
      self->closeStream(vbid);
    }
  });
}

void ReplicationClient::closeStream(vbucket::Vbid vbid) {
  dropped_.insert(vbid);
  std::string out;
  const uint32_t opaque = kCloseOpaqueBase + vbid;
  awaiting_[opaque] = absl::StrCat("DCP_CLOSE_STREAM vbucket ", vbid);
  protocol::appendRequest(
      out, {.opcode = protocol::Opcode::kDcpCloseStream, .opaque = opaque, .vbucket = vbid});
  send(out);
}

void ReplicationClient::doRead() {
  const std::span<char> room = reader_.prepare();
  const uint64_t generation = generation_;
  socket_.async_read_some(boost::asio::buffer(room.data(), room.size()),
                          [self = shared_from_this(), generation](
                              const boost::system::error_code& error, size_t bytes) {
                            if (self->generation_ != generation) return;
                            self->onRead(error, bytes);
                          });
}

void ReplicationClient::onRead(const boost::system::error_code& error, size_t bytes) {
  if (stopped_) return;
  if (error) {
    fail(absl::StrCat("connection to node '", options_.active.name, "' lost: ", error.message()));
    return;
  }
  reader_.commit(bytes);
  for (;;) {
    protocol::PacketReader::Next next = reader_.next();
    if (next.result == protocol::PacketReader::Result::kNeedMore) break;
    if (next.result != protocol::PacketReader::Result::kPacket) {
      fail(absl::StrCat("node '", options_.active.name, "' sent bytes that are not MCBP"));
      return;
    }
    if (!handlePacket(next.packet)) return;
  }
  doRead();
}

bool ReplicationClient::handlePacket(const protocol::Packet& packet) {
  return packet.header.isResponse() ? handleResponse(packet) : handleStreamMessage(packet);
}

bool ReplicationClient::handleResponse(const protocol::Packet& packet) {
  const uint32_t opaque = packet.header.opaque;
  auto it = awaiting_.find(opaque);
  if (it == awaiting_.end()) {
    fail(absl::StrCat("node '", options_.active.name, "' answered ",
                      std::string(protocol::toString(packet.header.opcode)),
                      " with an opaque nothing was sent with (", opaque, ")"));
    return false;
  }
  const std::string what = std::move(it->second);
  awaiting_.erase(it);
  const protocol::Status status = packet.header.status();
  // A CLOSE_STREAM may cross the producer's own STREAM_END: either way the
  // stream is gone.
  if (packet.header.opcode == protocol::Opcode::kDcpCloseStream) return true;
  const bool rollback = status == protocol::Status::kRollback &&
                        packet.header.opcode == protocol::Opcode::kDcpStreamReq &&
                        packet.value.size() == 8;
  if (rollback) {
    rollBack(static_cast<vbucket::Vbid>(opaque - kStreamOpaqueBase), what,
             protocol::wire::load64(packet.value, 0));
  } else if (status != protocol::Status::kSuccess) {
    const std::string detail(packet.value);
    fail(absl::StrCat(what, " refused by node '", options_.active.name,
                      "': ", std::string(protocol::toString(status)), " ", detail));
    return false;
  } else if (packet.header.opcode == protocol::Opcode::kDcpStreamReq &&
             !acceptStream(static_cast<vbucket::Vbid>(opaque - kStreamOpaqueBase), what,
                           packet.value)) {
    return false;
  }
  if (awaiting_.empty() && !streaming_) {
    streaming_ = true;
    backoff_ = kFirstBackoff;
    logLine(absl::StrCat("replicating bucket \"", options_.bucket->name(), "\" from node '",
                         options_.active.name, "': ", streams_.size(), " vbucket stream(s)"));
    last_failure_.clear();
  }
  return true;
}

void ReplicationClient::rollBack(vbucket::Vbid vbid, const std::string& what, vbucket::Seqno to) {
  const absl::StatusOr<size_t> dropped = options_.bucket->durability().resetReplica(vbid);
  if (!dropped.ok()) {
    // Promoted or made dead meanwhile: not streamed from this node any more.
    logLine(absl::StrCat(what, ": node '", options_.active.name, "' answered roll back to seqno ",
                         to, "; not rolled back: ", std::string(dropped.status().message())));
    return;
  }
  // Counted once done: a reader who sees the count sees the vbucket emptied.
  rollbacks_.fetch_add(1, std::memory_order_release);
  // In memory, as kv_engine's ephemeral buckets: to 0, whatever seqno was named.
  logLine(absl::StrCat(what, ": node '", options_.active.name, "' answered roll back to seqno ", to,
                       " (this replica's history diverged from the active's): vbucket ", vbid,
                       " rolled back to seqno 0, ", *dropped,
                       " item(s) dropped; streaming it again"));
  std::string out;
  appendStreamRequest(out, vbid);
  send(out);
}

bool ReplicationClient::acceptStream(vbucket::Vbid vbid, const std::string& what,
                                     std::string_view failover_log) {
  // The active's history becomes this replica's (kv_engine's PassiveStream
  // replaces its failover table with the one the answer carries).
  absl::StatusOr<std::vector<protocol::FailoverEntry>> log =
      protocol::decodeFailoverLog(failover_log);
  if (!log.ok() || log->empty()) {
    fail(absl::StrCat(what, ": node '", options_.active.name,
                      "' answered with no failover log it can read (",
                      log.ok() ? "empty" : std::string(log.status().message()), ")"));
    return false;
  }
  std::vector<vbucket::FailoverEntry> entries;
  for (const protocol::FailoverEntry& e : *log) entries.push_back({e.vbucket_uuid, e.seqno});
  options_.bucket->vbuckets().at(vbid).failovers().replace(entries);
  durability::PassiveDurabilityMonitor& monitor =
      options_.bucket->durability().passiveMonitor(vbid);
  streams_[vbid] =
      std::make_unique<dcp::PassiveStream>(options_.bucket->vbuckets().at(vbid), monitor);
  streams_open_.store(streams_.size(), std::memory_order_relaxed);
  // The HPS this replica already holds: the active counts it at once.
  if (const vbucket::Seqno hps = monitor.highPreparedSeqno(); hps > 0) sendAck(vbid, hps);
  return true;
}

bool ReplicationClient::handleStreamMessage(const protocol::Packet& packet) {
  unacked_bytes_ += protocol::kHeaderSize + packet.header.body_length;
  absl::StatusOr<protocol::DcpMessage> message = protocol::decodeDcpMessage(packet);
  if (!message.ok()) {
    fail(absl::StrCat(
        "node '", options_.active.name,
        "' sent a stream message that does not decode: ", std::string(message.status().message())));
    return false;
  }
  if (dropped_.contains(message->vbucket)) return true;  // closing: what was in flight
  auto it = streams_.find(message->vbucket);
  if (it == streams_.end() || message->opaque != kStreamOpaqueBase + message->vbucket) {
    fail(absl::StrCat("node '", options_.active.name, "' sent ",
                      std::string(protocol::toString(message->opcode)), " for vbucket ",
                      message->vbucket, " with opaque ", message->opaque,
                      ", which names no open stream"));
    return false;
  }
  if (message->opcode == protocol::Opcode::kDcpStreamEnd) {
    logLine(absl::StrCat("node '", options_.active.name, "' ended the stream of vbucket ",
                         message->vbucket, " (reason ", static_cast<uint32_t>(message->end_reason),
                         ")"));
    streams_.erase(it);
    streams_open_.store(streams_.size(), std::memory_order_relaxed);
    return true;
  }
  if (options_.bucket->vbuckets().at(message->vbucket).state() != vbucket::VBucketState::kReplica) {
    // Promoted (or made dead) here meanwhile: what the old active still
    // sends is not this vbucket's any more.
    logLine(absl::StrCat("vbucket ", message->vbucket,
                         " is no longer a replica here: dropping "
                         "its stream from node '",
                         options_.active.name, "'"));
    streams_.erase(it);
    streams_open_.store(streams_.size(), std::memory_order_relaxed);
    closeStream(message->vbucket);
    return true;
  }
  absl::Status applied;
  if (message->opcode == protocol::Opcode::kDcpSnapshotMarker) {
    applied = it->second->snapshotMarker(message->marker);
  } else {
    absl::StatusOr<std::optional<vbucket::Seqno>> hps = it->second->item(message->item);
    if (hps.ok()) {
      items_.fetch_add(1, std::memory_order_relaxed);
      if (hps->has_value()) sendAck(message->vbucket, **hps);
    }
    applied = hps.status();
  }
  if (!applied.ok()) {
    fail(absl::StrCat("vbucket ", message->vbucket, " from node '", options_.active.name,
                      "': ", std::string(applied.message())));
    return false;
  }
  if (unacked_bytes_ >= kBufferAckBytes) {
    std::string out;
    protocol::appendBufferAcknowledgement(out, 0, static_cast<uint32_t>(unacked_bytes_));
    unacked_bytes_ = 0;
    send(out);
  }
  return true;
}

void ReplicationClient::sendAck(vbucket::Vbid vbid, vbucket::Seqno hps) {
  std::string out;
  protocol::appendSeqnoAcknowledged(out, kStreamOpaqueBase + vbid, vbid, hps);
  acks_.fetch_add(1, std::memory_order_relaxed);
  send(out);
}

void ReplicationClient::send(const std::string& bytes) {
  pending_out_.append(bytes);
  if (!write_in_flight_) writeSome();
}

void ReplicationClient::writeSome() {
  if (pending_out_.empty() || !socket_.is_open()) return;
  writing_.swap(pending_out_);
  pending_out_.clear();
  write_in_flight_ = true;
  const uint64_t generation = generation_;
  boost::asio::async_write(
      socket_, boost::asio::buffer(writing_),
      [self = shared_from_this(), generation](const boost::system::error_code& error, size_t) {
        if (self->generation_ != generation) return;
        self->write_in_flight_ = false;
        self->writing_.clear();
        if (error) {
          self->fail(absl::StrCat("writing to node '", self->options_.active.name,
                                  "' failed: ", error.message()));
          return;
        }
        self->writeSome();
      });
}

void ReplicationClient::closeSocket() {
  ++generation_;
  boost::system::error_code ignored;
  socket_.close(ignored);
  socket_ = boost::asio::ip::tcp::socket(io_);
  reader_ = protocol::PacketReader(protocol::PacketReader::Direction::kBoth);
  pending_out_.clear();
  writing_.clear();
  write_in_flight_ = false;
  streaming_ = false;
  awaiting_.clear();
  streams_.clear();
  dropped_.clear();
  streams_open_.store(0, std::memory_order_relaxed);
  unacked_bytes_ = 0;
}

void ReplicationClient::fail(const std::string& why) {
  closeSocket();
  if (stopped_) return;
  if (why != last_failure_) {
    logLine(absl::StrCat("replication of bucket \"", options_.bucket->name(), "\": ", why,
                         "; retrying every ", kMaxBackoff.count(), " ms at most"));
    last_failure_ = why;
  }
  retry_timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (!error) self->connect();
  });
}

}  // namespace syncwrite::server
