#include "executor/task_table.h"

#include <utility>

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

void TaskTable::Shard::insert(TaskId id, TaskPtr task) {
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
  size_t i = home(id);
  while (slots[i].id != kNoTask) i = (i + 1) & mask;
  slots[i] = Slot{id, std::move(task)};
  ++size;
}

TaskTable::TaskPtr TaskTable::Shard::erase(TaskId id) {
  if (id == kNoTask) return nullptr;
  const size_t mask = slots.size() - 1;
  size_t hole = home(id);
  while (slots[hole].id != id) {
    if (slots[hole].id == kNoTask) return nullptr;
    hole = (hole + 1) & mask;
  }
  TaskPtr task = std::move(slots[hole].task);
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
  return task;
}

bool TaskTable::insert(TaskId id, const TaskPtr& task, const std::function<bool()>& refuse) {
  Shard& shard = shardFor(id);
  std::lock_guard lock(shard.mu);
  if (refuse()) return false;
  shard.insert(id, task);
  return true;
}

TaskTable::TaskPtr TaskTable::erase(TaskId id) {
  Shard& shard = shardFor(id);
  std::lock_guard lock(shard.mu);
  return shard.erase(id);
}

std::vector<TaskTable::TaskPtr> TaskTable::eraseIf(const std::function<bool(const Task&)>& pred) {
  std::vector<TaskPtr> out;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    std::vector<TaskId> doomed;
    for (const Slot& slot : shard.slots) {
      if (slot.id != kNoTask && pred(*slot.task)) doomed.push_back(slot.id);
    }
    for (TaskId id : doomed) out.push_back(shard.erase(id));
  }
  return out;
}

}  // namespace syncwrite::executor
