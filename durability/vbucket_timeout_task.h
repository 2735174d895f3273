// VBucketTimeoutTask: the event-driven timeout timer of one active vbucket.
//
// An executor task that is asleep (wake time clock::kNever) while its vbucket
// has no SyncWrite, so an idle vbucket costs nothing. Attached to the
// vbucket's monitor as its DeadlineListener, it is told, under the monitor's
// lock, the monitor's next deadline (the earliest deadline of a write whose
// client has not been answered, the head's or one behind it) whenever that
// changes, and re-arms itself with the pool's asynchronous snooze of a held
// task: the writer that changes it pays an atomic store (and, when the
// deadline is earlier than the armed timer, an id lookup and a post to the
// timer thread), and never waits for the executor. When it fires, run()
// calls processTimeout(now), which aborts the expired prefix, answers the
// writes expired behind the head, and tells the task the next deadline (or
// kNever).
//
// Deadlines are on the injected clock; the pool's timers are real time. A
// write is aborted only once its deadline is strictly before clock.now().
// In the server that clock is the precise one (the deadline was stamped with
// it too), so the timer is armed for the deadline itself, as a steady_clock
// time, plus 1 ns so that the clock read when it fires is past it. A clock
// that may lag real time (the coarse clock, by a tick or more) could still
// be at or before the deadline when the timer fires; re-arming for a time
// already past would run the task again at once, a spin until the clock
// caught up. So the absolute re-arm is taken only when the deadline is ahead
// of steady_clock now (a second, precise read on a lagging clock's path); any
// other deadline, and every deadline on a clock that is not on the steady
// timeline (a test's manual clock), is a sleep of (deadline - clock.now())
// from real now, at least kMinSleep. A timer that fires early therefore
// sleeps again for at least kMinSleep; it never spins, and a timeout fires
// after its deadline, never before.
//
// Thread-safety: nextDeadlineChanged() is called under the monitor's lock
// from any thread; run() by the pool. The monitor and the counters passed in
// must outlive every run (the owner cancels the task and unregisters its
// Taskable before destroying them).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "clock/clock_ref.h"
#include "durability/active_durability_monitor.h"
#include "executor/executor_pool.h"
#include "executor/task.h"

namespace syncwrite::durability {

// Counters shared by a bucket's timeout tasks (relaxed atomics: statistics).
struct TimeoutTaskCounters {
  std::atomic<uint64_t> runs{0};
  std::atomic<uint64_t> rearms{0};  // of retired tasks; live ones keep their own
};

class VBucketTimeoutTask final : public executor::Task, public DeadlineListener {
 public:
  static constexpr clock::Duration kMinSleep = std::chrono::milliseconds(1);

  // Created asleep forever; schedule it, then attach it with
  // monitor.setDeadlineListener(task), which arms it. `clock` is the clock
  // processTimeout() is given `now` from.
  VBucketTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                     ActiveDurabilityMonitor& monitor, clock::ClockRef clock,
                     TimeoutTaskCounters& counters);

  bool run() override;
  void nextDeadlineChanged(clock::TimePoint next_deadline) override;

  // The deadline the timer was last armed for (kNever: asleep forever).
  clock::TimePoint armedDeadline() const noexcept {
    return clock::TimePoint(clock::Duration(armed_.load(std::memory_order_acquire)));
  }
  // How many times the deadline changed. Kept here rather than in the shared
  // counters so that the write path does no atomic read-modify-write; the
  // owner adds it to TimeoutTaskCounters::rearms when it retires the task.
  uint64_t rearms() const noexcept { return rearms_.load(std::memory_order_relaxed); }

 private:
  executor::ExecutorPool& pool_;
  ActiveDurabilityMonitor& monitor_;
  const clock::ClockRef clock_;
  TimeoutTaskCounters& counters_;
  std::atomic<clock::Duration::rep> armed_;
  std::atomic<uint64_t> rearms_{0};
};

}  // namespace syncwrite::durability
