#include "kvstore/disk_flusher.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::kvstore {

namespace {

// What `item` stores as a document (its own seqno; the caller sets another).
DocumentRecord recordOf(const vbucket::Item& item) {
  DocumentRecord record;
  record.key = std::string(item.key());
  if (!item.deleted) record.value = std::string(item.value());
  record.seqno = item.seqno;
  record.cas = item.cas;
  record.flags = item.meta.flags;
  record.expiry = item.meta.expiry;
  record.datatype = item.meta.datatype;
  record.deleted = item.deleted;
  return record;
}

}  // namespace

class DiskFlusher::Task final : public executor::Task {
 public:
  Task(executor::Taskable& owner, DiskFlusher& flusher)
      : executor::Task(owner, "disk flusher", executor::TaskGroup::kNonIO, clock::kNever),
        flusher_(flusher) {}

  // Run by the pool only, never concurrently with itself: `due_` and
  // `backoff_` need no lock.
  bool run() override {
    if (taskable().isShutdown()) return false;
    if (flusher_.paused()) {
      snooze(clock::Duration::max());  // setPaused(false) wakes it
      return true;
    }
    // flush_delay_ms runs from the first run that finds a vbucket marked
    // since the last flush; a mark that wakes the task meanwhile does not cut
    // it short, and joins the batch.
    const int64_t delay_ms = flusher_.delay_ms_.load(std::memory_order_relaxed);
    const auto now = std::chrono::steady_clock::now();
    if (delay_ms > 0 && !due_ && flusher_.reader_.anyDirty()) {
      due_ = now + std::chrono::milliseconds(delay_ms);
    }
    if (due_ && now < *due_) {
      snooze(*due_ - now);
      return true;
    }
    due_.reset();
    const Ran ran = flusher_.flushOnce();
    if (ran.failed) {
      backoff_ = backoff_ == clock::Duration::zero()
                     ? clock::Duration(kFirstBackoff)
                     : std::min<clock::Duration>(backoff_ * 2, kMaxBackoff);
      snooze(backoff_);
      return true;
    }
    backoff_ = clock::Duration::zero();
    // After a write, look again at once: what arrived while it synced is
    // the next group. A run that finds nothing sleeps until the next mark.
    snooze(ran.more || ran.wrote ? clock::Duration::zero() : clock::Duration::max());
    return true;
  }

 private:
  DiskFlusher& flusher_;
  std::optional<std::chrono::steady_clock::time_point> due_;  // of a delayed run
  clock::Duration backoff_ = clock::Duration::zero();
};

DiskFlusher::DiskFlusher(std::string name, vbucket::VBucketMap& map, executor::ExecutorPool& pool,
                         KVStore& store, Persisted persisted, StateOf state_of, Log log)
    : pool_(pool),
      store_(store),
      persisted_(std::move(persisted)),
      state_of_(std::move(state_of)),
      log_(std::move(log)),
      reader_(map, std::string(kCursor)),
      owner_(std::move(name)),
      task_(std::make_shared<Task>(owner_, *this)) {
  id_ = pool_.schedule(task_);
}

DiskFlusher::~DiskFlusher() {
  pool_.unregisterTaskable(owner_);
  // What is still queued goes to disk before the store closes (a graceful
  // stop keeps every write); nobody waits for a report any more. A disk
  // that keeps failing is tried once.
  for (int attempts = 0; attempts < 1000; ++attempts) {
    const Ran ran = flushOnce();
    if (ran.failed || (!ran.more && !ran.wrote)) break;
  }
}

void DiskFlusher::markDirty(vbucket::Vbid vbid, bool /*prepare*/) noexcept {
  if (reader_.markDirty(vbid)) pool_.wake(id_);
}

void DiskFlusher::setDelay(std::chrono::milliseconds delay) noexcept {
  delay_ms_.store(delay.count(), std::memory_order_relaxed);
}

void DiskFlusher::setPaused(bool paused) {
  paused_.store(paused, std::memory_order_release);
  if (!paused) pool_.wake(id_);
}

void DiskFlusher::build(vbucket::Vbid vbid, std::vector<vbucket::LogRecord>&& records) {
  if (records.empty()) return;
  // Per key, the record that decides what is on disk after this batch. The
  // views point into the records' items, alive until the end of this call.
  absl::flat_hash_map<std::string_view, const vbucket::LogRecord*> committed;
  absl::flat_hash_map<std::string_view, const vbucket::LogRecord*> prepares;
  bool prepare = false;
  for (const vbucket::LogRecord& record : records) {
    const std::string_view key = record.item->key();
    switch (record.op) {
      case vbucket::QueueOp::kMutation:
        committed[key] = &record;
        break;
      case vbucket::QueueOp::kPrepare:
        prepares[key] = &record;
        prepare = true;
        break;
      case vbucket::QueueOp::kCommit:
        committed[key] = &record;
        prepares[key] = &record;
        break;
      case vbucket::QueueOp::kAbort:
        prepares[key] = &record;
        break;
    }
  }
  for (const auto& [key, record] : committed) {
    DocumentRecord document = recordOf(*record->item);
    document.seqno = record->seqno;  // a commit's own, not its prepare's
    pending_.batch.putCommitted(vbid, document);
  }
  for (const auto& [key, record] : prepares) {
    if (record->op == vbucket::QueueOp::kPrepare) {
      DocumentRecord document = recordOf(*record->item);
      document.level = record->durability_level;
      pending_.batch.putPrepare(vbid, document);
    } else {
      pending_.batch.erasePrepare(vbid, key);
    }
  }
  const vbucket::Seqno last = records.back().seqno;
  pending_.batch.putState(vbid, state_of_(vbid, last));
  pending_.written.push_back({vbid, last, prepare});
  pending_.records += records.size();
}

DiskFlusher::Ran DiskFlusher::flushOnce() {
  Ran ran;
  const bool retrying = failing_.load(std::memory_order_relaxed);
  if (!retrying) {
    // Raised before the cursors move, lowered once what they passed is on
    // disk: itemsQueued() never shows a batch in flight as nothing.
    unwritten_.store(1, std::memory_order_seq_cst);
    ran.more = reader_.readRecords(
        kBatch, [&](vbucket::Vbid vbid, std::vector<vbucket::LogRecord>&& records) {
          build(vbid, std::move(records));
        });
    unwritten_.store(pending_.records, std::memory_order_seq_cst);
  }
  if (pending_.written.empty()) return ran;
  const absl::Status written = store_.write(pending_.batch);
  if (!written.ok()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    failing_.store(true, std::memory_order_release);
    const std::string error(written.message());
    if (error != last_error_) {
      log_(absl::StrCat(owner_.name(), ": write of ", pending_.records, " records failed (", error,
                        "); retrying with backoff, persisted seqnos held"));
      last_error_ = error;
    }
    ran.failed = true;
    ran.more = false;
    return ran;
  }
  if (retrying) {
    log_(absl::StrCat(owner_.name(), ": writes to ", store_.dir().string(), " work again after ",
                      failures_.load(std::memory_order_relaxed), " failed attempts in all"));
    failing_.store(false, std::memory_order_release);
    last_error_.clear();
    ran.more = true;  // what was marked meanwhile is still to be read
  }
  batches_.fetch_add(1, std::memory_order_relaxed);
  items_.fetch_add(pending_.records, std::memory_order_relaxed);
  std::vector<Pending::Written> done = std::move(pending_.written);
  pending_.written.clear();
  pending_.records = 0;
  unwritten_.store(0, std::memory_order_seq_cst);
  for (const Pending::Written& w : done) {
    if (w.prepare) persisted_(w.vbid, w.last_seqno);
  }
  ran.wrote = true;
  return ran;
}

}  // namespace syncwrite::kvstore
