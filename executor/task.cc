#include "executor/task.h"

#include "executor/task_access.h"
#include "executor/task_table.h"

namespace syncwrite::executor {

Task::~Task() { TaskTable::unlink(*this); }

void Task::snooze(clock::Duration d) noexcept {
  // "Never" needs no clock read (it is the common disarm of an idle timer).
  const TimeRep wake = d == clock::Duration::max() ? kNeverRep : deadlineAfter(nowRep(), d);
  wake_time_.store(wake, std::memory_order_seq_cst);
}

}  // namespace syncwrite::executor
