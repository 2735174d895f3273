// TaskTable (internal to executor/): TaskId -> Task for every scheduled task
// whose object still exists, sharded so that front-end threads snoozing
// different tasks rarely meet on a lock.
//
// Ownership. The table does not own tasks: an entry holds a weak reference,
// and the pool's own reference to a scheduled task travels with it until it
// is dead (TaskRecord::self, task_record.h).
// The entry leaves with the Task object — ~Task unlinks it — so the thread
// that drops the last reference pays for the removal, not the worker that
// finished the run. For a one-shot task scheduled and released by the same
// front-end thread, the shard's lock and slot then stay in that thread's
// cache: an erase on the worker moved them across cores twice per task, the
// largest single cost of a schedule-and-run (OneShotScheduleRun threads:1,
// three interleaved runs: 1.04-1.13 M/s before, 1.26-1.29 M/s after). Lookups
// treat dead tasks as absent.
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
// Locking. Lookups run a caller's function under the shard lock; while an
// entry is present its Task's memory is valid (a dying Task blocks in ~Task on
// this lock before its memory goes), so the fast path needs no reference count
// traffic. Functions must be short and must not call back into the table.
// Nothing may drop a task reference while holding a shard lock: dropping the
// last one runs ~Task, which takes the lock. Lock order: a shard lock may be
// held while taking the ready queue's lock, never the other way round.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "base/mutex.h"
#include "executor/task.h"

namespace syncwrite::executor {

class TaskTable {
 public:
  using TaskPtr = std::shared_ptr<Task>;

 private:
  struct Slot {
    TaskId id = kNoTask;  // kNoTask: empty
    Task* task = nullptr;
    std::weak_ptr<Task> ref;
  };

 public:
  // A live task found by withLiveTask(), valid for the duration of the call.
  class Found {
   public:
    Task& task() const noexcept { return *slot_.task; }
    // A strong reference (for the timer thread, or a caller that acts after
    // the lookup); null if the task is being destroyed, in which case it is
    // dead. It is released after the shard lock.
    const TaskPtr& ref() {
      if (!keep_) keep_ = slot_.ref.lock();
      return keep_;
    }

   private:
    friend class TaskTable;
    Found(const Slot& slot, TaskPtr& keep) : slot_(slot), keep_(keep) {}
    const Slot& slot_;
    TaskPtr& keep_;
  };

  TaskTable() = default;
  TaskTable(const TaskTable&) = delete;
  TaskTable& operator=(const TaskTable&) = delete;

  // Inserts `task` under its id (which it must have) and links the task to
  // this table, unless `refuse()`, evaluated under the shard lock, is true.
  bool insert(const TaskPtr& task, const std::function<bool()>& refuse);

  // Runs fn(Found&) under the shard lock when `id` names a task that is not
  // dead; false (fn not called) otherwise.
  template <typename Fn>
  bool withLiveTask(TaskId id, Fn&& fn) {
    TaskPtr keep;  // declared before the lock, so released after it
    Shard& shard = shardFor(id);
    base::MutexLock lock(shard.mu);
    const Slot* slot = shard.find(id);
    if (slot == nullptr || isDead(*slot->task)) return false;
    Found found(*slot, keep);
    fn(found);
    return true;
  }

  // Strong references to every task that is not dead and that `pred` accepts.
  std::vector<TaskPtr> collectLiveIf(const std::function<bool(const Task&)>& pred);

  // Called by ~Task: removes the task's entry, if it is still linked to a
  // table. Safe against a concurrent detachAll().
  static void unlink(Task& task) noexcept;

  // Entries, live or dead (each still has its Task object). For tests.
  size_t size();

  // For the pool's destruction: unlinks every task (their destructors no
  // longer touch the table), waiting for destructors already under way, and
  // returns strong references to the tasks that are still alive. The table
  // is empty afterwards.
  std::vector<TaskPtr> detachAll();

 private:
  static constexpr unsigned kBlockBits = 6;  // 64 consecutive ids per shard block
  static constexpr unsigned kShardBits = 5;  // 32 shards
  static constexpr size_t kShards = size_t{1} << kShardBits;

  struct alignas(64) Shard {
    base::Mutex mu;
    std::vector<Slot> slots ABSL_GUARDED_BY(mu) = std::vector<Slot>(64);  // a power of two
    size_t size ABSL_GUARDED_BY(mu) = 0;

    size_t home(TaskId id) const noexcept ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      const TaskId key = ((id >> (kBlockBits + kShardBits)) << kBlockBits) |
                         (id & ((TaskId{1} << kBlockBits) - 1));
      return key & (slots.size() - 1);
    }
    const Slot* find(TaskId id) const noexcept ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
    void insert(Slot entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
    void erase(TaskId id) noexcept ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  };

  static bool isDead(Task& task) noexcept;
  Shard& shardFor(TaskId id) noexcept { return shards_[(id >> kBlockBits) & (kShards - 1)]; }

  std::array<Shard, kShards> shards_;
};

}  // namespace syncwrite::executor
