#include "executor/task.h"

#include "executor/task_access.h"

namespace syncwrite::executor {

Task::~Task() = default;

void Task::snooze(clock::Duration d) noexcept {
  wake_time_.store(deadlineAfter(nowRep(), d), std::memory_order_seq_cst);
}

}  // namespace syncwrite::executor
