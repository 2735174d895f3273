// TaskAccess (internal to executor/): the pool's view of a Task's private
// atomics, and the integer time arithmetic the pool does on them.
//
// Wake times are stored as steady_clock ticks (nanoseconds since the clock's
// epoch) so that one atomic holds them; kNeverRep is clock::kNever.
#pragma once

#include <atomic>
#include <chrono>

#include "clock/time.h"
#include "executor/task.h"

namespace syncwrite::executor {

using TimeRep = clock::Duration::rep;
inline constexpr TimeRep kNeverRep = clock::kNever.time_since_epoch().count();

inline TimeRep nowRep() noexcept {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

// now + d, saturating at kNeverRep (Duration::max() means never) and at 0.
inline TimeRep deadlineAfter(TimeRep now, clock::Duration d) noexcept {
  const TimeRep ticks = d.count();
  if (ticks >= kNeverRep - now) return kNeverRep;
  if (ticks < -now) return 0;
  return now + ticks;
}

class TaskAccess {
 public:
  static std::atomic<TimeRep>& wakeTime(Task& t) noexcept { return t.wake_time_; }
  static TaskRecord& record(Task& t) noexcept { return t.record_; }

  // Gives the task its id; false when it already has one (scheduled before).
  static bool claimId(Task& t, TaskId id) noexcept {
    TaskId none = kNoTask;
    return t.id_.compare_exchange_strong(none, id, std::memory_order_acq_rel);
  }
  static void releaseId(Task& t) noexcept { t.id_.store(kNoTask, std::memory_order_release); }

  // kDead is final: a worker that claimed a run just before unregisterTaskable()
  // or cancel() retired the task still sets kRunning/kSnoozed afterwards, and
  // must not bring the task's state back from kDead.
  static void setState(Task& t, TaskState s) noexcept {
    TaskState cur = t.state_.load(std::memory_order_acquire);
    while (cur != TaskState::kDead &&
           !t.state_.compare_exchange_weak(cur, s, std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
    }
  }
};

}  // namespace syncwrite::executor
