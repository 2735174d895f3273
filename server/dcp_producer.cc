#include "server/dcp_producer.h"

#include <charconv>
#include <optional>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>

#include "server/protocol/dcp_messages.h"

namespace syncwrite::server {
namespace {

// Records one stream reads per batch: a marker per this many items at most.
constexpr size_t kBatchItems = 256;

// Each producer's cursors get a name of their own, so that a second
// connection of the same name never takes the first one's cursor.
std::atomic<uint64_t> next_producer_id{1};

}  // namespace

DcpProducer::DcpProducer(Bucket& bucket, const std::string& connection_name, std::string consumer,
                         std::function<void()> wake)
    : bucket_(bucket),
      name_(absl::StrCat("dcp:", connection_name, "#",
                         next_producer_id.fetch_add(1, std::memory_order_relaxed))),
      consumer_(std::move(consumer)),
      wake_(std::move(wake)),
      ack_latency_(bucket.replicaAckLatencies().of(consumer_)) {}

DcpProducer::~DcpProducer() { stop(); }

void DcpProducer::stop() {
  if (registered_) {
    bucket_.removeLogReader(this);
    registered_ = false;
  }
  streams_.clear();
}

absl::Status DcpProducer::control(std::string_view key, std::string_view value) {
  const std::string k(key);
  const std::string v(value);
  if (key == "enable_sync_writes") {
    if (value != "true" && value != "false") {
      return absl::InvalidArgumentError(
          absl::StrCat("DCP_CONTROL enable_sync_writes: '", v, "' is not true or false"));
    }
    sync_writes_ = value == "true";
    return absl::OkStatus();
  }
  if (key == "connection_buffer_size") {
    uint64_t bytes = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), bytes);
    if (error != std::errc() || end != value.data() + value.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("DCP_CONTROL connection_buffer_size: '", v, "' is not a byte count"));
    }
    window_ = bytes;
    return absl::OkStatus();
  }
  // Accepted as kv_engine's consumer sends them; no behaviour of this
  // producer depends on them (no noops are sent: the connection's idle timer
  // spares DCP connections).
  static constexpr std::string_view kAccepted[] = {"consumer_name",
                                                   "enable_noop",
                                                   "set_noop_interval",
                                                   "set_priority",
                                                   "supports_cursor_dropping_vulcan",
                                                   "supports_hifi_MFU",
                                                   "send_stream_end_on_client_close_stream",
                                                   "enable_expiry_opcode",
                                                   "v7_dcp_status_codes",
                                                   "enable_out_of_order_snapshots"};
  for (std::string_view accepted : kAccepted) {
    if (key == accepted) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("DCP_CONTROL: unknown control '", k, "' (value '", v, "')"));
}

DcpProducer::StreamAnswer DcpProducer::streamRequest(vbucket::Vbid vbid, uint32_t opaque,
                                                     const StreamStart& start) {
  vbucket::VBucket* vb = bucket_.vbuckets().get(vbid);
  if (vb == nullptr || vb->state() != vbucket::VBucketState::kActive) {
    return {.outcome = StreamAnswer::Outcome::kNotMyVbucket};
  }
  if (streams_.contains(vbid)) return {.outcome = StreamAnswer::Outcome::kExists};
  if (std::optional<vbucket::RollbackPoint> rollback = vb->failovers().needsRollback(
          start.start_seqno, start.vbucket_uuid, start.snap_start_seqno, start.snap_end_seqno,
          vb->highSeqno())) {
    return {.outcome = StreamAnswer::Outcome::kRollback,
            .rollback_seqno = rollback->seqno,
            .rollback_reason = std::move(rollback->reason)};
  }
  dcp::ActiveStream::Opened opened =
      dcp::ActiveStream::open(*vb, bucket_.durability(), name_, start.start_seqno);
  if (opened.rollback) {
    return {.outcome = StreamAnswer::Outcome::kRollback,
            .rollback_seqno = opened.rollback_seqno,
            .rollback_reason = "the stream would start past what this vbucket's log holds"};
  }
  streams_[vbid] = Stream{opaque, std::move(opened.stream), {}};
  if (!registered_) {
    bucket_.addLogReader(this);
    registered_ = true;
  }
  return {.outcome = StreamAnswer::Outcome::kAccepted, .failover_log = vb->failovers().entries()};
}

bool DcpProducer::closeStream(vbucket::Vbid vbid) { return streams_.erase(vbid) != 0; }

void DcpProducer::seqnoAcknowledged(vbucket::Vbid vbid, uint64_t prepared_seqno) {
  const auto found = streams_.find(vbid);
  if (found == streams_.end()) return;
  std::deque<SentPrepare>& sent = found->second.sent;
  if (sent.empty() || sent.front().seqno > prepared_seqno) return;
  const auto now = std::chrono::steady_clock::now();
  while (!sent.empty() && sent.front().seqno <= prepared_seqno) {
    ack_latency_.record(
        sent.front().level,
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - sent.front().at).count());
    sent.pop_front();
  }
}

void DcpProducer::bufferAcknowledged(uint32_t bytes) {
  unacked_ = bytes >= unacked_ ? 0 : unacked_ - bytes;
}

size_t DcpProducer::fill(std::string& out, size_t max_bytes) {
  wake_posted_.store(false, std::memory_order_seq_cst);
  const size_t before = out.size();
  bool progress = true;
  while (progress && out.size() - before < max_bytes && (window_ == 0 || unacked_ < window_)) {
    progress = false;
    // One batch of each stream in turn, from the one after where the last
    // fill stopped, so that busy streams cannot starve the others.
    const size_t count = streams_.size();
    auto it = streams_.lower_bound(resume_);
    for (size_t visited = 0; visited < count && !streams_.empty(); ++visited) {
      if (it == streams_.end()) it = streams_.begin();
      const vbucket::Vbid vbid = it->first;
      Stream& s = it->second;
      if (bucket_.vbuckets().at(vbid).state() != vbucket::VBucketState::kActive) {
        const size_t at = out.size();
        protocol::appendStreamEnd(out, s.opaque, vbid, dcp::StreamEndReason::kStateChanged);
        unacked_ += out.size() - at;
        it = streams_.erase(it);
        resume_ = it == streams_.end() ? 0 : it->first;
        progress = true;
        continue;
      }
      dcp::ActiveStream::Batch batch = s.stream->next(kBatchItems);
      if (!batch.items.empty()) {
        const size_t at = out.size();
        protocol::appendSnapshotMarker(out, s.opaque, vbid, batch.marker, sync_writes_);
        std::optional<std::chrono::steady_clock::time_point> now;
        for (const dcp::StreamItem& item : batch.items) {
          protocol::appendStreamItem(out, s.opaque, vbid, item);
          if (item.kind != dcp::StreamItemKind::kPrepare) continue;
          if (!now) now = std::chrono::steady_clock::now();
          if (s.sent.size() == kMaxSentPrepares) s.sent.pop_front();
          s.sent.push_back({item.seqno, item.level, *now});
        }
        unacked_ += out.size() - at;
        progress = true;
      }
      ++it;
      resume_ = it == streams_.end() ? 0 : it->first;
      if (out.size() - before >= max_bytes || (window_ != 0 && unacked_ >= window_)) break;
    }
  }
  return out.size() - before;
}

void DcpProducer::logQueued(vbucket::Vbid vbid) noexcept {
  (void)vbid;  // every stream is read at the next fill()
  if (wake_posted_.load(std::memory_order_relaxed)) return;
  if (!wake_posted_.exchange(true, std::memory_order_seq_cst)) wake_();
}

}  // namespace syncwrite::server
