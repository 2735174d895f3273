#include "executor/task_table.h"

#include <thread>
#include <utility>

#include "executor/task_access.h"

namespace syncwrite::executor {

const TaskTable::Slot* TaskTable::Shard::find(TaskId id) const noexcept {
  if (id == kNoTask) return nullptr;  // would match an empty slot
  const size_t mask = slots.size() - 1;
  for (size_t i = home(id);; i = (i + 1) & mask) {
    const Slot& slot = slots[i];
    if (slot.id == id) return &slot;
    if (slot.id == kNoTask) return nullptr;
  }
}

void TaskTable::Shard::insert(Slot entry) {
  if ((size + 1) * 2 > slots.size()) {  // keep the load factor <= 1/2
    std::vector<Slot> old(slots.size() * 2);
    old.swap(slots);
    for (Slot& slot : old) {
      if (slot.id != kNoTask) {
        size_t i = home(slot.id);
        while (slots[i].id != kNoTask) i = (i + 1) & (slots.size() - 1);
        slots[i] = std::move(slot);
      }
    }
  }
  const size_t mask = slots.size() - 1;
  size_t i = home(entry.id);
  while (slots[i].id != kNoTask) i = (i + 1) & mask;
  slots[i] = std::move(entry);
  ++size;
}

void TaskTable::Shard::erase(TaskId id) noexcept {
  if (id == kNoTask) return;
  const size_t mask = slots.size() - 1;
  size_t hole = home(id);
  while (slots[hole].id != id) {
    if (slots[hole].id == kNoTask) return;
    hole = (hole + 1) & mask;
  }
  slots[hole] = Slot{};
  --size;
  // Backward-shift: pull later entries of the probe run into the hole when
  // their home is not cyclically within (hole, j].
  for (size_t j = (hole + 1) & mask; slots[j].id != kNoTask; j = (j + 1) & mask) {
    const size_t h = home(slots[j].id);
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    slots[hole] = std::move(slots[j]);
    slots[j] = Slot{};
    hole = j;
  }
}

bool TaskTable::isDead(Task& task) noexcept {
  return TaskAccess::record(task).state.load(std::memory_order_seq_cst) == RecordState::kDead;
}

bool TaskTable::insert(const TaskPtr& task, const std::function<bool()>& refuse) {
  const TaskId id = task->id();
  Shard& shard = shardFor(id);
  base::MutexLock lock(shard.mu);
  if (refuse()) return false;
  shard.insert(Slot{id, task.get(), task});
  TaskAccess::record(*task).table.store(this, std::memory_order_seq_cst);
  return true;
}

std::vector<TaskTable::TaskPtr> TaskTable::collectLiveIf(
    const std::function<bool(const Task&)>& pred) {
  std::vector<TaskPtr> out;
  for (Shard& shard : shards_) {
    base::MutexLock lock(shard.mu);
    for (const Slot& slot : shard.slots) {
      if (slot.id == kNoTask || isDead(*slot.task) || !pred(*slot.task)) continue;
      // A failed lock() means the task is being destroyed: it is dead.
      if (TaskPtr task = slot.ref.lock()) out.push_back(std::move(task));
    }
  }
  return out;
}

size_t TaskTable::size() {
  size_t total = 0;
  for (Shard& shard : shards_) {
    base::MutexLock lock(shard.mu);
    total += shard.size;
  }
  return total;
}

void TaskTable::unlink(Task& task) noexcept {
  // Whoever exchanges the link away — this destructor or detachAll() — is the
  // one that removes the entry; the other leaves it alone.
  std::atomic<TaskTable*>& link = TaskAccess::record(task).table;
  if (link.load(std::memory_order_relaxed) == nullptr) return;  // never scheduled
  TaskTable* table = link.exchange(nullptr, std::memory_order_seq_cst);
  if (table == nullptr) return;
  Shard& shard = table->shardFor(task.id());
  base::MutexLock lock(shard.mu);
  shard.erase(task.id());
}

std::vector<TaskTable::TaskPtr> TaskTable::detachAll() {
  std::vector<TaskPtr> alive;
  for (Shard& shard : shards_) {
    for (;;) {
      std::vector<TaskId> detached;
      bool dying = false;
      {
        base::MutexLock lock(shard.mu);
        for (const Slot& slot : shard.slots) {
          if (slot.id == kNoTask) continue;
          // Null: the task's destructor took the link, and removes the entry
          // as soon as this lock is free. Otherwise the task's memory must
          // not be touched after the exchange (its destructor may run now).
          if (TaskAccess::record(*slot.task).table.exchange(nullptr, std::memory_order_seq_cst) ==
              nullptr) {
            dying = true;
            continue;
          }
          if (TaskPtr task = slot.ref.lock()) alive.push_back(std::move(task));
          detached.push_back(slot.id);
        }
        for (TaskId id : detached) shard.erase(id);
      }
      if (!dying) break;
      std::this_thread::yield();
    }
  }
  return alive;
}

}  // namespace syncwrite::executor
