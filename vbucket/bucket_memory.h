// BucketMemory: the bytes a bucket holds for its items, counted as they are
// allocated and freed, and the limits they are held to.
//
// Three counts, each a signed atomic updated with relaxed adds (a reader sees
// a recent total, never a torn one):
//  - item bytes: every item block alive (CheckpointManager allocates one per
//    queued change: the item, its key and value, its checkpoint entry or
//    entries), from allocation until the last holder — a checkpoint, the
//    hash table, a tracked prepare, a reader — lets go;
//  - index bytes: the hash table's slot for each key (the key itself is
//    the item's: HashTable::slotBytes());
//  - checkpoint bytes: what the checkpoints' entries account for
//    (CheckpointEntry::bytes(), the figure CheckpointStats::memory_bytes
//    reports), from queue until expel or checkpoint removal.
// mem_used is item bytes + index bytes. Checkpoint bytes overlap item bytes
// (an item in a checkpoint is both); they are the share recovery can free.
//
// Limits, as kv_engine names them (engines/ep/configuration.json): the bucket
// quota (max_size); the checkpoint quota, a share of it
// (checkpoint_memory_ratio); and recovery's upper and lower marks, shares of
// the checkpoint quota. When an add takes checkpoint bytes above the upper
// mark, the recovery trigger is called once, and not again until
// recoveryDone() — so a burst of writes above the mark wakes recovery once.
//
// Writes are refused (shouldRefuseWrites) while mem_used has reached the
// quota or checkpoint bytes have reached the checkpoint quota: kv_engine's
// temporary OOM, answered 0x86 Etmpfail, which SDKs retry.
//
// Thread-safety: every member may be called from any thread, except
// setRecoveryTrigger(), which must be called before the first add.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace syncwrite::vbucket {

// The limits, in bytes (computed by BucketMemory::setLimits).
struct MemoryLimits {
  int64_t quota = 0;
  int64_t checkpoint_quota = 0;
  int64_t upper_mark = 0;  // checkpoint bytes that trigger recovery
  int64_t lower_mark = 0;  // checkpoint bytes recovery stops at
};

class BucketMemory {
 public:
  BucketMemory() = default;
  BucketMemory(const BucketMemory&) = delete;
  BucketMemory& operator=(const BucketMemory&) = delete;

  // `quota` bytes; the ratio and marks in percent (of the quota, and of the
  // checkpoint quota). Takes effect for the next add and check.
  void setLimits(uint64_t quota, uint64_t checkpoint_percent, uint64_t upper_percent,
                 uint64_t lower_percent) noexcept;
  MemoryLimits limits() const noexcept;

  // Called when checkpoint bytes cross the upper mark; see the file comment.
  void setRecoveryTrigger(std::function<void()> trigger) { trigger_ = std::move(trigger); }

  void addItemBytes(int64_t delta) noexcept {
    item_bytes_.fetch_add(delta, std::memory_order_relaxed);
  }
  void addIndexBytes(int64_t delta) noexcept {
    index_bytes_.fetch_add(delta, std::memory_order_relaxed);
  }
  void addCheckpointBytes(int64_t delta) noexcept {
    const int64_t now = checkpoint_bytes_.fetch_add(delta, std::memory_order_relaxed) + delta;
    if (delta > 0 && now > upper_mark_.load(std::memory_order_relaxed)) requestRecovery();
  }

  int64_t itemBytes() const noexcept { return item_bytes_.load(std::memory_order_relaxed); }
  int64_t indexBytes() const noexcept { return index_bytes_.load(std::memory_order_relaxed); }
  int64_t checkpointBytes() const noexcept {
    return checkpoint_bytes_.load(std::memory_order_relaxed);
  }
  int64_t memUsed() const noexcept { return itemBytes() + indexBytes(); }

  // True while mem_used has reached the quota or checkpoint bytes the
  // checkpoint quota. Two relaxed loads and two compares.
  bool shouldRefuseWrites() const noexcept {
    return memUsed() >= quota_.load(std::memory_order_relaxed) ||
           checkpointBytes() >= checkpoint_quota_.load(std::memory_order_relaxed);
  }
  bool aboveUpperMark() const noexcept {
    return checkpointBytes() > upper_mark_.load(std::memory_order_relaxed);
  }
  bool aboveLowerMark() const noexcept {
    return checkpointBytes() > lower_mark_.load(std::memory_order_relaxed);
  }

  // Calls the trigger unless a recovery is already requested.
  void requestRecovery() noexcept;
  // Recovery has finished a run: the next crossing of the upper mark triggers
  // it again.
  void recoveryDone() noexcept { recovery_requested_.store(false, std::memory_order_release); }
  bool recoveryRequested() const noexcept {
    return recovery_requested_.load(std::memory_order_acquire);
  }

  // Counters for stats.
  void countRefusedWrite() noexcept { writes_refused_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t writesRefused() const noexcept {
    return writes_refused_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> item_bytes_{0};
  std::atomic<int64_t> index_bytes_{0};
  std::atomic<int64_t> checkpoint_bytes_{0};
  std::atomic<int64_t> quota_{INT64_MAX};
  std::atomic<int64_t> checkpoint_quota_{INT64_MAX};
  std::atomic<int64_t> upper_mark_{INT64_MAX};
  std::atomic<int64_t> lower_mark_{INT64_MAX};
  std::atomic<bool> recovery_requested_{false};
  std::atomic<uint64_t> writes_refused_{0};
  std::function<void()> trigger_;
};

}  // namespace syncwrite::vbucket
