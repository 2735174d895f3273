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
    const bool more = flusher_.flushDirty();
    snooze(more ? clock::Duration::zero() : clock::Duration::max());
    return true;
  }

 private:
  SimulatedFlusher& flusher_;
  bool waited_ = false;
};

SimulatedFlusher::SimulatedFlusher(std::string name, vbucket::VBucketMap& map,
                                   executor::ExecutorPool& pool, Persisted persisted)
    : map_(map),
      pool_(pool),
      persisted_(std::move(persisted)),
      dirty_(std::make_unique<std::atomic<bool>[]>(map.size())),
      owner_(std::move(name)),
      task_(std::make_shared<Task>(owner_, *this)) {
  for (size_t id = 0; id < map_.size(); ++id) {
    map_.at(static_cast<vbucket::Vbid>(id))
        .checkpointManager()
        .registerCursor(std::string(kCursor));
  }
  id_ = pool_.schedule(task_);
}

SimulatedFlusher::~SimulatedFlusher() { pool_.unregisterTaskable(owner_); }

void SimulatedFlusher::setDelay(std::chrono::milliseconds delay) noexcept {
  delay_ms_.store(delay.count(), std::memory_order_relaxed);
}

void SimulatedFlusher::setPaused(bool paused) {
  paused_.store(paused, std::memory_order_release);
  if (!paused && any_dirty_.load(std::memory_order_acquire)) pool_.wake(id_);
}

bool SimulatedFlusher::flushDirty() {
  // Cleared before reading: a write queued after this store marks again and
  // wakes the task for one more run; one queued before it is read below.
  any_dirty_.store(false, std::memory_order_seq_cst);
  bool more = false;
  for (size_t id = 0; id < map_.size(); ++id) {
    if (!dirty_[id].load(std::memory_order_seq_cst)) continue;
    dirty_[id].store(false, std::memory_order_seq_cst);
    const auto vbid = static_cast<vbucket::Vbid>(id);
    std::vector<vbucket::LogRecord> records =
        map_.at(vbid).checkpointManager().readItems(kCursor, kBatch);
    if (records.empty()) continue;
    batches_.fetch_add(1, std::memory_order_relaxed);
    items_.fetch_add(records.size(), std::memory_order_relaxed);
    bool prepare = false;
    for (const vbucket::LogRecord& r : records) prepare |= r.op == vbucket::QueueOp::kPrepare;
    if (prepare) persisted_(vbid, records.back().seqno);
    if (records.size() == kBatch) {
      // More behind it: stay dirty for the next run, which comes at once.
      dirty_[id].store(true, std::memory_order_relaxed);
      any_dirty_.store(true, std::memory_order_relaxed);
      more = true;
    }
  }
  return more;
}

size_t SimulatedFlusher::itemsQueued() const {
  size_t n = 0;
  for (size_t id = 0; id < map_.size(); ++id) {
    n += map_.at(static_cast<vbucket::Vbid>(id)).checkpointManager().itemsRemaining(kCursor);
  }
  return n;
}

}  // namespace syncwrite::server
