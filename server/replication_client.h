// ReplicationClient: a replica node's DCP connection to one active node, for
// one bucket — it receives the active's streams of the vbuckets this node is
// a replica of, applies them, and acknowledges the prepares it holds.
//
// In Couchbase, ns_server opens both ends and proxies the bytes; syncwrite
// runs without it, so the replica dials the active itself, with the requests
// kv_engine's DcpConsumer sends (docs/dcp/documentation/): HELLO (XERROR),
// SASL PLAIN as the cluster's replication_user, SELECT_BUCKET, DCP_OPEN with
// the producer flag and {"consumer_name": <this node>}, DCP_CONTROL
// enable_sync_writes, consumer_name and connection_buffer_size, then one
// DCP_STREAM_REQ per vbucket from the seqno the replica vbucket holds. All
// are pipelined; any refusal closes the connection.
//
// Each accepted stream feeds a dcp::PassiveStream of the replica vbucket; an
// HPS it reports is sent as DCP_SEQNO_ACKNOWLEDGED at once, and so is the
// HPS at the stream's start (when above 0) and one local persistence moved
// (ackPersisted()). Every kBufferAckBytes of stream messages processed are
// acknowledged (BUFFER_ACKNOWLEDGEMENT), inside the connection_buffer_size
// window this client asks for.
//
// Failures: a connection refused or lost, a refused request, a stream
// message that does not decode or does not apply in order: logged with the
// reason, the connection is closed, and it is opened again after a backoff
// (100 ms doubling to 2 s; reset once streaming), each stream resuming from
// what its vbucket holds. Each STREAM_REQ carries the vbucket's failover
// uuid (its active's history, adopted from the last accepted stream's
// failover log). A stream the active answers Rollback (the replica holds a
// history the active's failover table does not vouch for) rolls its vbucket
// back to 0, as kv_engine's ephemeral buckets do
// (BucketDurability::resetReplica), and is asked for again from 0, while the
// connection's other streams go on. A vbucket that stops being a replica here
// (promoted) has its stream closed (DCP_CLOSE_STREAM) and is not asked for
// again.
//
// Threading: runs on one io_context (an I/O thread's); start(), stop() and
// ackPersisted() may be called from any thread and post there.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "dcp/passive_stream.h"
#include "server/bucket.h"
#include "server/cluster_config.h"
#include "server/protocol/packet_reader.h"

namespace syncwrite::server {

class ReplicationClient final : public std::enable_shared_from_this<ReplicationClient> {
 public:
  static constexpr uint32_t kBufferBytes = 10 * 1024 * 1024;  // connection_buffer_size
  static constexpr uint32_t kBufferAckBytes = kBufferBytes / 4;
  static constexpr std::chrono::milliseconds kFirstBackoff{100};
  static constexpr std::chrono::milliseconds kMaxBackoff{2000};

  struct Options {
    Bucket* bucket = nullptr;  // must outlive the client
    std::string this_node;
    ClusterNode active;
    std::string user;  // empty: the active has no users
    std::string password;
    std::vector<vbucket::Vbid> vbuckets;
  };

  ReplicationClient(boost::asio::io_context& io, Options options);
  ReplicationClient(const ReplicationClient&) = delete;
  ReplicationClient& operator=(const ReplicationClient&) = delete;

  // Connects (asynchronously) and keeps connected until stop().
  void start();
  // Closes the connection for good. Asynchronous; idempotent.
  void stop();
  // Local persistence moved `vbid`'s HPS to `hps`: acknowledge it.
  void ackPersisted(vbucket::Vbid vbid, vbucket::Seqno hps);
  // Streams `vbid` from this active too (a topology named it the vbucket's
  // active), or no longer (another node is). Any thread; asynchronous.
  void addVbucket(vbucket::Vbid vbid);
  void removeVbucket(vbucket::Vbid vbid);

  const std::string& activeNode() const noexcept { return options_.active.name; }
  const Bucket& bucket() const noexcept { return *options_.bucket; }
  // Totals for stats and tests.
  uint64_t connects() const noexcept { return connects_.load(std::memory_order_relaxed); }
  uint64_t itemsReceived() const noexcept { return items_.load(std::memory_order_relaxed); }
  uint64_t acksSent() const noexcept { return acks_.load(std::memory_order_relaxed); }
  // Stream requests the active answered Rollback (this replica's history
  // diverged from the active's; see the file comment), counted once the
  // vbucket has been emptied.
  uint64_t rollbacks() const noexcept { return rollbacks_.load(std::memory_order_acquire); }
  size_t streamsOpen() const noexcept { return streams_open_.load(std::memory_order_relaxed); }

 private:
  void connect();
  void sendHandshake();
  // Appends `vbid`'s STREAM_REQ from what it holds (nothing unless it is a
  // replica here), and awaits its answer.
  void appendStreamRequest(std::string& out, vbucket::Vbid vbid);
  // Sends CLOSE_STREAM of `vbid`; what still arrives for it is dropped.
  void closeStream(vbucket::Vbid vbid);
  void doRead();
  void onRead(const boost::system::error_code& error, size_t bytes);
  // False when it failed the connection.
  bool handlePacket(const protocol::Packet& packet);
  // The active answered `vbid`'s STREAM_REQ Rollback to `to`: resets the
  // replica vbucket and asks again from 0.
  void rollBack(vbucket::Vbid vbid, const std::string& what, vbucket::Seqno to);
  // A STREAM_REQ of `vbid` was accepted with `failover_log`: adopts the log
  // and opens the passive stream. False (after fail()) for a log it cannot read.
  bool acceptStream(vbucket::Vbid vbid, const std::string& what, std::string_view failover_log);
  bool handleResponse(const protocol::Packet& packet);
  bool handleStreamMessage(const protocol::Packet& packet);
  void sendAck(vbucket::Vbid vbid, vbucket::Seqno hps);
  void send(const std::string& bytes);
  void writeSome();
  // Logs `why` (unless stopping), closes, and connects again after the backoff.
  void fail(const std::string& why);
  void closeSocket();

  boost::asio::io_context& io_;
  const Options options_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer retry_timer_;
  protocol::PacketReader reader_{protocol::PacketReader::Direction::kBoth};
  std::string pending_out_;  // queued while a write is in flight
  std::string writing_;
  bool write_in_flight_ = false;
  bool stopped_ = false;
  bool streaming_ = false;   // every handshake step answered Success
  uint64_t generation_ = 0;  // raised by each close: stale handlers see it changed
  std::chrono::milliseconds backoff_ = kFirstBackoff;
  std::string last_failure_;  // logged once until something changes
  // Opaques of the handshake's requests not yet answered, and what each was.
  std::map<uint32_t, std::string> awaiting_;
  // The vbuckets streamed from this active (Options::vbuckets, then
  // addVbucket / removeVbucket).
  std::set<vbucket::Vbid> vbuckets_;
  std::map<vbucket::Vbid, std::unique_ptr<dcp::PassiveStream>> streams_;
  // Streams this client closed (the vbucket left replica): what still
  // arrives for them is dropped.
  std::set<vbucket::Vbid> dropped_;
  uint64_t unacked_bytes_ = 0;

  std::atomic<uint64_t> connects_{0};
  std::atomic<uint64_t> items_{0};
  std::atomic<uint64_t> acks_{0};
  std::atomic<uint64_t> rollbacks_{0};
  std::atomic<size_t> streams_open_{0};
};

}  // namespace syncwrite::server
