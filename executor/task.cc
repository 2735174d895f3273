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

void Task::snoozeAligned(clock::Duration period) noexcept {
  const TimeRep p = period.count();
  if (p <= 0 || period == clock::Duration::max()) {
    snooze(period);
    return;
  }
  const TimeRep now = nowRep();
  // now - now % p + p, without overflowing: a period that reaches past
  // kNeverRep means never, as snooze() saturates.
  const TimeRep next = p > kNeverRep - now ? kNeverRep : now - now % p + p;
  wake_time_.store(next, std::memory_order_seq_cst);
}

}  // namespace syncwrite::executor
