#include "server/simulated_flusher.h"

#include <utility>

namespace syncwrite::server {

class SimulatedFlusher::Task final : public executor::Task {
 public:
  Task(executor::Taskable& owner, SimulatedFlusher& flusher)
      : executor::Task(owner, "simulated flusher", executor::TaskGroup::kNonIO, clock::kNever),
        flusher_(flusher) {}

  // Run by the pool only, never concurrently with itself: `waited_` needs no
  // lock.
  bool run() override {
    if (taskable().isShutdown()) return false;
    // Off the plain pace for every run: only a run that flushed goes back to
    // it (paceAfterFlush()). A prepare that woke a run waiting flush_delay
    // would have cut the delay short, and one behind a paused flusher would
    // have woken it for nothing.
    flusher_.plain_pace_.store(false, std::memory_order_relaxed);
    if (flusher_.paused()) {
      snooze(clock::Duration::max());  // setPaused(false) wakes it
      return true;
    }
    const int64_t delay_ms = flusher_.delay_ms_.load(std::memory_order_relaxed);
    if (delay_ms > 0 && !waited_) {
      waited_ = true;
      snooze(std::chrono::milliseconds(delay_ms));
      return true;
    }
    waited_ = false;
    const Flushed flushed = flusher_.flushDirty();
    if (flushed.more) {
      snooze(clock::Duration::zero());
    } else if (flushed.any) {
      // Writes are coming: read again after the pace, not at each mark.
      flusher_.reader_.holdMarks();
      snooze(flusher_.paceAfterFlush());
    } else {
      snooze(clock::Duration::max());  // idle: the next mark wakes it
    }
    return true;
  }

 private:
  SimulatedFlusher& flusher_;
  bool waited_ = false;
};

SimulatedFlusher::SimulatedFlusher(std::string name, vbucket::VBucketMap& map,
                                   executor::ExecutorPool& pool, Persisted persisted,
                                   Awaited awaited, std::chrono::milliseconds plain_interval)
    : pool_(pool),
      persisted_(std::move(persisted)),
      awaited_(std::move(awaited)),
      plain_interval_(plain_interval),
      reader_(map, std::string(kCursor)),
      owner_(std::move(name)),
      task_(std::make_shared<Task>(owner_, *this)) {
  id_ = pool_.schedule(task_);
}

SimulatedFlusher::~SimulatedFlusher() { pool_.unregisterTaskable(owner_); }

void SimulatedFlusher::setDelay(std::chrono::milliseconds delay) noexcept {
  delay_ms_.store(delay.count(), std::memory_order_relaxed);
}

void SimulatedFlusher::notePrepare() noexcept {
  // This thread raised the count before it queued the prepare, if the
  // prepare needs it: false means this one does not.
  if (!awaited_()) return;
  // The count was raised sequentially consistent, so these loads come after
  // it in the single total order: either they see the flusher's store of
  // true, or that store, and the re-check after it, come after the count
  // (paceAfterFlush()). No fence: ThreadSanitizer does not model one.
  if (plain_pace_.load(std::memory_order_seq_cst) &&
      plain_pace_.exchange(false, std::memory_order_seq_cst)) {
    pool_.wake(id_);  // a wake during a run still runs the task once more
  }
}

std::chrono::milliseconds SimulatedFlusher::paceAfterFlush() noexcept {
  // plain_pace_ is false here: the run cleared it.
  if (awaited_()) return kMinInterval;
  plain_pace_.store(true, std::memory_order_seq_cst);
  // Looked at again after the store: a writer whose count this load misses
  // sees plain_pace_ in notePrepare() and wakes the task.
  if (!awaited_()) return plain_interval_;
  plain_pace_.store(false, std::memory_order_relaxed);
  return kMinInterval;
}

void SimulatedFlusher::setPaused(bool paused) {
  paused_.store(paused, std::memory_order_release);
  if (!paused && reader_.anyDirty()) pool_.wake(id_);
}

SimulatedFlusher::Flushed SimulatedFlusher::flushDirty() {
  Flushed flushed;
  // Which prepares it passed does not matter, only whether there was one:
  // no entry is read (LogCursorReader::passDirty).
  flushed.more = reader_.passDirty(
      kBatch, [&](vbucket::Vbid vbid, const vbucket::CheckpointManager::Skimmed& passed) {
        flushed.any = true;
        batches_.fetch_add(1, std::memory_order_relaxed);
        items_.fetch_add(passed.items, std::memory_order_relaxed);
        // Only prepares wait for persistence; the report goes out with no
        // log lock held (it may queue commits).
        if (passed.prepare) persisted_(vbid, passed.last_seqno);
      });
  return flushed;
}

}  // namespace syncwrite::server
