// Task and Taskable: the unit of background work and its owner.
//
// A Task is run by an ExecutorPool. Subclasses implement run(); the pool calls
// it at (or soon after) the task's wake time, never concurrently with itself.
// run() returns true to be run again at its wake time — which run() may have
// moved with snooze() — or false when the task is finished.
//
// The wake time is atomic so that a front-end thread can push it later with
// little more than a store (see ExecutorPool::snooze); only a wake time
// earlier than the one the pool's timer is armed for needs the timer re-armed.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "clock/time.h"
#include "executor/task_record.h"

namespace syncwrite::executor {

using TaskId = uint64_t;
inline constexpr TaskId kNoTask = 0;

// Which threads run a task. NonIO runs timeout tasks and visitors.
enum class TaskGroup { kNonIO };

// Who runs a task whose run the timer thread finds due (ExecutorPool, "Due
// runs"): a worker (the default), or the timer thread itself, which spares
// the worker's wake-up. Runs queued without the timer thread (a wake, a
// task due when scheduled, run() returning true at a past wake time) go to
// a worker either way.
enum class DueRun : uint8_t { kWorker, kTimerThread };

// The owner of tasks — a bucket, in the server. The pool cancels all of an
// owner's tasks in ExecutorPool::unregisterTaskable(), after which the owner
// may be destroyed.
class Taskable {
 public:
  explicit Taskable(std::string name) : name_(std::move(name)) {}
  virtual ~Taskable() = default;
  Taskable(const Taskable&) = delete;
  Taskable& operator=(const Taskable&) = delete;

  const std::string& name() const noexcept { return name_; }

  // True once the owner is shutting down: its tasks should finish promptly.
  bool isShutdown() const noexcept { return shutdown_.load(std::memory_order_acquire); }
  void setShutdown() noexcept { shutdown_.store(true, std::memory_order_release); }

 private:
  const std::string name_;
  std::atomic<bool> shutdown_{false};
};

// A Taskable that owns nothing in particular: for benchmarks and tests, where a
// mocked owner would cost more than the thing measured.
class NullTaskable final : public Taskable {
 public:
  NullTaskable() : Taskable("null") {}
};

enum class TaskState : uint8_t {
  kSnoozed,  // waiting for its wake time (or for a wake, when that is kNever)
  kRunning,  // run() is executing on a pool thread
  kDead,     // finished or cancelled; never runs again
};

class Task {
 public:
  // `initial_wake` is when the first run is due: a past time (the default)
  // means as soon as scheduled; clock::kNever means only when woken or snoozed.
  Task(Taskable& owner, std::string description, TaskGroup group = TaskGroup::kNonIO,
       clock::TimePoint initial_wake = clock::TimePoint{}, DueRun due_run = DueRun::kWorker)
      : owner_(owner),
        description_(std::move(description)),
        group_(group),
        due_run_(due_run),
        wake_time_(initial_wake.time_since_epoch().count()) {}
  virtual ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // The work. Return true to run again at wakeTime(), false when finished.
  // Exceptions: see ExecutorPool (the task is treated as finished).
  virtual bool run() = 0;

  // The next run is due `d` from now (saturating: clock::Duration::max()
  // means clock::kNever, i.e. only when woken or snoozed). Costs a clock read
  // and an atomic store. Made for calls from inside run(). It only stores the
  // wake time, so from another thread it is enough only for a wake time no
  // earlier than the current one (the pool's timer fires at the earlier time,
  // sees the later one and sleeps again); for an earlier one use
  // ExecutorPool::snooze(), or the pool would not notice it until its timer
  // next fires.
  void snooze(clock::Duration d) noexcept;

  // The next run is due at the first multiple of `period` after now, counted
  // on the steady clock from its epoch (a sleep in (0, period]). Periodic
  // tasks with one period then fall due in the same instant, and the pool
  // wakes once for all of them rather than once for each, as Linux's
  // round_jiffies() does for timers that need no precise phase
  // (docs/benchmarks.md, "Idle CPU": polling at 30 buckets). A period of
  // zero or less is snooze(zero); Duration::max() is snooze(max). As
  // snooze(): made for calls from inside run().
  void snoozeAligned(clock::Duration period) noexcept;

  TaskId id() const noexcept { return id_.load(std::memory_order_acquire); }  // 0 until scheduled
  const std::string& description() const noexcept { return description_; }
  Taskable& taskable() const noexcept { return owner_; }
  TaskGroup group() const noexcept { return group_; }
  DueRun dueRun() const noexcept { return due_run_; }
  TaskState state() const noexcept { return state_.load(std::memory_order_acquire); }

  clock::TimePoint wakeTime() const noexcept {
    return clock::TimePoint(clock::Duration(wake_time_.load(std::memory_order_acquire)));
  }

 private:
  friend class TaskAccess;  // the pool's internals (executor/task_access.h)

  Taskable& owner_;
  const std::string description_;
  const TaskGroup group_;
  const DueRun due_run_;
  std::atomic<clock::Duration::rep> wake_time_;
  std::atomic<TaskId> id_{kNoTask};
  std::atomic<TaskState> state_{TaskState::kSnoozed};
  TaskRecord record_;  // the pool's bookkeeping (executor/task_record.h)
};

}  // namespace syncwrite::executor
