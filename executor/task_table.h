// TaskTable (internal to executor/): TaskId -> Task for every scheduled
// task that is not dead, sharded so that front-end threads snoozing different
// tasks rarely meet on a lock.
//
// Ids are handed out in sequence, so the table is indexed by the id itself
// rather than by a hash: blocks of kBlock consecutive ids share a shard, and
// within a shard an id's home slot is the id with the shard bits removed
// (open addressing, linear probing, backward-shift deletion). Tasks touched in
// id order — the round-robin re-snooze of many timeout tasks — then walk the
// slots sequentially, which the hardware prefetcher follows; a hashed table
// costs two cache misses per lookup once it outgrows L2 (about 38% of the
// snooze throughput at 30 000 tasks, measured).
//
// Lookups run a caller's function under the shard lock, so the record cannot
// be removed (and the fast path needs no reference count traffic) while the
// function runs. Functions must be short and must not call back into the
// table. Lock order: a shard lock may be held while taking the ready queue's
// lock, never the other way round.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "executor/task.h"

namespace syncwrite::executor {

class TaskTable {
 public:
  using TaskPtr = std::shared_ptr<Task>;

  // Inserts `task` under `id` unless `refuse()`, evaluated under the shard
  // lock, is true.
  bool insert(TaskId id, const TaskPtr& task, const std::function<bool()>& refuse);

  // Runs fn(task) under the shard lock; false (fn not called) when absent.
  template <typename Fn>
  bool withTask(TaskId id, Fn&& fn) {
    Shard& shard = shardFor(id);
    std::lock_guard lock(shard.mu);
    const Slot* slot = shard.find(id);
    if (slot == nullptr) return false;
    fn(slot->task);
    return true;
  }

  // Removes and returns the task with `id` (nullptr when absent).
  TaskPtr erase(TaskId id);

  // Removes and returns every task `pred` accepts.
  std::vector<TaskPtr> eraseIf(const std::function<bool(const Task&)>& pred);

 private:
  static constexpr unsigned kBlockBits = 6;  // 64 consecutive ids per shard block
  static constexpr unsigned kShardBits = 5;  // 32 shards
  static constexpr size_t kShards = size_t{1} << kShardBits;

  struct Slot {
    TaskId id = kNoTask;  // kNoTask: empty
    TaskPtr task;
  };

  struct alignas(64) Shard {
    std::mutex mu;
    std::vector<Slot> slots = std::vector<Slot>(64);  // size is a power of two
    size_t size = 0;

    size_t home(TaskId id) const noexcept {
      const TaskId key = ((id >> (kBlockBits + kShardBits)) << kBlockBits) |
                         (id & ((TaskId{1} << kBlockBits) - 1));
      return key & (slots.size() - 1);
    }
    const Slot* find(TaskId id) const noexcept;
    void insert(TaskId id, TaskPtr task);
    TaskPtr erase(TaskId id);
  };

  Shard& shardFor(TaskId id) noexcept { return shards_[(id >> kBlockBits) & (kShards - 1)]; }

  std::array<Shard, kShards> shards_;
};

}  // namespace syncwrite::executor
