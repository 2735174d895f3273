#include "dcp/active_stream.h"

#include <algorithm>
#include <utility>

namespace syncwrite::dcp {

std::string_view toString(StreamItemKind kind) noexcept {
  switch (kind) {
    case StreamItemKind::kMutation:
      return "mutation";
    case StreamItemKind::kDeletion:
      return "deletion";
    case StreamItemKind::kPrepare:
      return "prepare";
    case StreamItemKind::kCommit:
      return "commit";
    case StreamItemKind::kAbort:
      return "abort";
  }
  return "unknown";
}

ActiveStream::ActiveStream(vbucket::VBucket& vb, std::string cursor_name, Seqno start_seqno)
    : vb_(vb), cursor_(std::move(cursor_name)), start_(start_seqno), max_visible_(start_seqno) {}

ActiveStream::~ActiveStream() { vb_.checkpointManager().removeCursor(cursor_); }

ActiveStream::Opened ActiveStream::open(vbucket::VBucket& vb,
                                        const durability::BucketDurability& durability,
                                        const std::string& cursor_name, Seqno start_seqno) {
  Opened opened;
  vbucket::CheckpointManager& log = vb.checkpointManager();
  log.removeCursor(cursor_name);
  if (start_seqno > vb.highSeqno()) {
    opened.rollback = true;  // it holds what this vbucket never had
    return opened;
  }
  std::unique_ptr<ActiveStream> stream(new ActiveStream(vb, cursor_name, start_seqno));
  log.registerCursor(cursor_name);
  // Read before the first record: with none, everything up to it was
  // expelled, and anything queued after the read is above it.
  const Seqno high = vb.highSeqno();
  stream->first_read_ = log.readItems(cursor_name, 1);
  const Seqno first_in_memory =
      stream->first_read_.empty() ? high + 1 : stream->first_read_.front().seqno;
  if (first_in_memory > start_seqno + 1) {
    if (start_seqno > 0) {
      opened.rollback = true;  // the destructor removes the cursor
      return opened;
    }
    stream->buildBackfill(durability, first_in_memory);
  }
  opened.stream = std::move(stream);
  return opened;
}

void ActiveStream::buildBackfill(const durability::BucketDurability& durability,
                                 Seqno first_in_memory) {
  backfill_end_ = first_in_memory - 1;
  for (const std::string& key : vb_.hashTable().keys()) {
    vbucket::QueuedItem item = vb_.hashTable().find(key);
    if (!item) continue;  // erased since keys() copied it
    const Seqno seqno = vbucket::committedSeqno(*item);
    if (seqno >= first_in_memory) continue;  // the log sends it
    StreamItem out;
    out.kind = StreamItemKind::kMutation;
    out.seqno = seqno;
    out.item = std::move(item);
    backfill_.push_back(std::move(out));
  }
  for (auto& [prepare, level] : durability.trackedPrepares(vb_.id())) {
    if (prepare->seqno >= first_in_memory) continue;
    backfilled_prepares_.insert(prepare->seqno);
    StreamItem out;
    out.kind = StreamItemKind::kPrepare;
    out.seqno = prepare->seqno;
    out.item = std::move(prepare);
    out.level = level;
    backfill_.push_back(std::move(out));
  }
  std::sort(backfill_.begin(), backfill_.end(),
            [](const StreamItem& a, const StreamItem& b) { return a.seqno < b.seqno; });
  for (const StreamItem& item : backfill_) {
    if (item.kind == StreamItemKind::kMutation) max_visible_ = item.seqno;
  }
}

bool ActiveStream::toStreamItem(const vbucket::LogRecord& record, StreamItem& out) {
  if (record.seqno <= start_) return false;
  out.seqno = record.seqno;
  out.item = record.item;
  switch (record.op) {
    case vbucket::QueueOp::kMutation:
      out.kind = record.item->deleted ? StreamItemKind::kDeletion : StreamItemKind::kMutation;
      return true;
    case vbucket::QueueOp::kPrepare:
      out.kind = StreamItemKind::kPrepare;
      out.level = static_cast<durability::Level>(record.durability_level);
      return true;
    case vbucket::QueueOp::kCommit:
    case vbucket::QueueOp::kAbort: {
      const Seqno prepared = record.item->seqno;
      const bool prepare_unsent = backfill_end_ != 0 && prepared <= backfill_end_ &&
                                  !backfilled_prepares_.contains(prepared);
      if (record.op == vbucket::QueueOp::kAbort) {
        if (prepare_unsent) return false;
        out.kind = StreamItemKind::kAbort;
        out.prepared_seqno = prepared;
        return true;
      }
      if (prepare_unsent) {
        out.kind = record.item->deleted ? StreamItemKind::kDeletion : StreamItemKind::kMutation;
        return true;
      }
      out.kind = StreamItemKind::kCommit;
      out.prepared_seqno = prepared;
      return true;
    }
  }
  return false;
}

ActiveStream::Batch ActiveStream::next(size_t max_items) {
  Batch batch;
  if (backfill_end_ != 0 && !backfill_sent_) {
    backfill_sent_ = true;
    batch.marker = {.start = start_ + 1,
                    .end = backfill_end_,
                    .flags = kSnapshotDisk | kSnapshotCheckpoint,
                    .max_visible_seqno = max_visible_,
                    .high_completed_seqno = 0};
    batch.items = std::move(backfill_);
    backfill_.clear();
    return batch;
  }
  std::vector<vbucket::LogRecord> records = std::move(first_read_);
  first_read_.clear();
  if (records.size() < max_items) {
    std::vector<vbucket::LogRecord> more =
        vb_.checkpointManager().readItems(cursor_, max_items - records.size());
    records.insert(records.end(), std::make_move_iterator(more.begin()),
                   std::make_move_iterator(more.end()));
  }
  if (records.empty()) return batch;
  batch.items.reserve(records.size());
  for (const vbucket::LogRecord& record : records) {
    StreamItem item;
    if (!toStreamItem(record, item)) continue;
    if (item.kind != StreamItemKind::kPrepare && item.kind != StreamItemKind::kAbort) {
      max_visible_ = item.seqno;
    }
    batch.items.push_back(std::move(item));
  }
  if (batch.items.empty()) return batch;
  batch.marker = {.start = batch.items.front().seqno,
                  .end = batch.items.back().seqno,
                  .flags = kSnapshotMemory,
                  .max_visible_seqno = max_visible_,
                  .high_completed_seqno = 0};
  return batch;
}

size_t ActiveStream::itemsRemaining() const {
  return vb_.checkpointManager().itemsRemaining(cursor_);
}

}  // namespace syncwrite::dcp
