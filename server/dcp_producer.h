// DcpProducer: the producer side of one DCP connection — a replica's streams
// of this node's active vbuckets, written into the connection's output.
//
// A connection becomes one with DCP_OPEN (producer flag); the consumer then
// sends DCP_CONTROL (kv_engine's keys: connection_buffer_size,
// enable_sync_writes, consumer_name, ...) and a DCP_STREAM_REQ per vbucket.
// Each accepted stream is a dcp::ActiveStream; fill() writes what the streams
// have (snapshot markers, then their items, as server/protocol/dcp_messages.h
// encodes them; V2.0 markers once sync writes are enabled) behind the answers
// already in the output, until the output holds a write's worth or the
// consumer's flow-control window (connection_buffer_size, 0 = unbounded) is
// full; BUFFER_ACKNOWLEDGEMENT opens the window again. A stream whose vbucket
// leaves active ends with STREAM_END StateChanged; CLOSE_STREAM ends one.
//
// Waking: from its first stream on, the bucket tells the producer
// (Bucket::LogReader) whenever one of its vbuckets queued an item; the producer calls `wake` at
// most once until the connection has run fill() again (an atomic flag), so a burst of writes costs
// one post to the connection's I/O thread.
//
// Thread-safety: everything but logQueued() runs on the connection's I/O
// thread. Lifetime: stop() must be called (it unregisters from the bucket)
// before the producer is destroyed; the bucket outlives it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <absl/status/status.h>

#include "dcp/active_stream.h"
#include "server/bucket.h"

namespace syncwrite::server {

class DcpProducer final : public Bucket::LogReader {
 public:
  // Streams `bucket`'s vbuckets to the replica `consumer` (the node whose
  // acks the connection sends). `wake` schedules fill() on the connection's
  // I/O thread; it may be called from any thread.
  DcpProducer(Bucket& bucket, const std::string& connection_name, std::string consumer,
              std::function<void()> wake);
  ~DcpProducer();
  DcpProducer(const DcpProducer&) = delete;
  DcpProducer& operator=(const DcpProducer&) = delete;

  const std::string& consumer() const noexcept { return consumer_; }
  Bucket& bucket() const noexcept { return bucket_; }

  // DCP_CONTROL. InvalidArgument naming the key or the value for a control
  // this producer does not know or a value it cannot take.
  absl::Status control(std::string_view key, std::string_view value);

  // DCP_STREAM_REQ of `vbid` with `opaque` from `start_seqno` of history
  // `vbucket_uuid`, inside snapshot [snap_start, snap_end]: what to answer.
  // Success (the stream starts on the next fill()) with the vbucket's
  // failover log; Rollback with the seqno and why, when the failover table
  // cannot vouch for the client's history (vbucket/failover_table.h) or the
  // client asks for what the log no longer holds; KeyExists (a stream of
  // that vbucket is open); NotMyVbucket.
  struct StreamAnswer {
    enum class Outcome { kAccepted, kRollback, kExists, kNotMyVbucket } outcome;
    uint64_t rollback_seqno = 0;
    std::string rollback_reason{};
    std::vector<vbucket::FailoverEntry> failover_log{};  // with kAccepted
  };
  struct StreamStart {
    uint64_t start_seqno = 0;
    uint64_t vbucket_uuid = 0;
    uint64_t snap_start_seqno = 0;
    uint64_t snap_end_seqno = 0;
  };
  StreamAnswer streamRequest(vbucket::Vbid vbid, uint32_t opaque, const StreamStart& start);
  // CLOSE_STREAM: false when no stream of `vbid` is open.
  bool closeStream(vbucket::Vbid vbid);
  // BUFFER_ACKNOWLEDGEMENT of `bytes` the consumer has processed.
  void bufferAcknowledged(uint32_t bytes);
  // DCP_SEQNO_ACKNOWLEDGED of `vbid` up to `prepared_seqno`: records, for each
  // prepare of that stream sent and now covered, how long the consumer took
  // (ReplicaAckLatencies). O(prepares covered).
  void seqnoAcknowledged(vbucket::Vbid vbid, uint64_t prepared_seqno);

  // Appends stream messages to `out` until it holds `max_bytes` or the
  // window is full. Returns the bytes appended.
  size_t fill(std::string& out, size_t max_bytes);

  // Unregisters from the bucket and ends every stream (cursors removed).
  void stop();

  size_t streams() const noexcept { return streams_.size(); }

  // Bucket::LogReader, any thread.
  void logQueued(vbucket::Vbid vbid) noexcept override;

 private:
  // A prepare written to the consumer and not acknowledged yet.
  struct SentPrepare {
    uint64_t seqno;
    durability::Level level;
    std::chrono::steady_clock::time_point at;
  };
  // The sent prepares a stream remembers for their ack's latency: a consumer
  // that does not ack (or acks past them) costs no more than this.
  static constexpr size_t kMaxSentPrepares = 4096;
  struct Stream {
    uint32_t opaque = 0;
    std::unique_ptr<dcp::ActiveStream> stream;
    std::deque<SentPrepare> sent;  // in seqno order
  };

  Bucket& bucket_;
  const std::string name_;
  const std::string consumer_;
  const std::function<void()> wake_;
  durability::CommitLatency& ack_latency_;  // the bucket's, of consumer_
  std::map<vbucket::Vbid, Stream> streams_;
  vbucket::Vbid resume_ = 0;  // the stream fill() starts at (the one after the last it read)
  bool sync_writes_ = false;
  uint64_t window_ = 0;  // connection_buffer_size; 0: no flow control
  uint64_t unacked_ = 0;
  bool registered_ = false;
  // Set when `wake_` was called and fill() has not run since.
  std::atomic<bool> wake_posted_{false};
};

}  // namespace syncwrite::server
