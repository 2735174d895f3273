// VBucketTimeoutTask: the event-driven timeout timer of one active vbucket.
//
// An executor task that is asleep (wake time clock::kNever) while its vbucket
// has no SyncWrite, so an idle vbucket costs nothing. Attached to the
// vbucket's monitor as its HeadDeadlineListener, it is told, under the
// monitor's lock, the deadline of the oldest write whenever that changes, and
// re-arms itself with the pool's asynchronous snooze of a held task: the
// writer that added the first write pays an atomic store (and, when the
// deadline is earlier than the armed timer, an id lookup and a post to the
// timer thread), and never waits for the executor. When it fires, run()
// calls processTimeout(now), which aborts the expired prefix and tells the
// task the next head's deadline (or kNever).
//
// Deadlines are on the injected clock; the pool's timers are real time. A
// write is aborted only once its deadline is strictly before clock.now(), and
// the coarse clock lags real time — by a tick (4 ms at HZ=250) usually, by
// two or more after the CPUs were idle (8 ms seen on this project's VM). A
// timer re-armed to a time already past in real time would run again at once
// until the clock caught up: a spin. So:
//  - a deadline at least kAbsoluteArmMargin ahead of clock.now(), on a clock
//    whose readings are steady_clock times (ClockRef::onSteadyTimeline(): the
//    coarse clock in production), is handed to the pool as an absolute time,
//    plus one coarse tick — no second clock read on the common path (a
//    timeout of seconds);
//  - any other deadline, and every re-arm after a run that found nothing
//    expired yet, is a sleep of (deadline - clock.now()) from real now, at
//    least kMinSleep.
// A timer that fires early therefore sleeps again for at least kMinSleep; it
// never spins. A timeout fires after its deadline, never before.
//
// Thread-safety: headDeadlineChanged() is called under the monitor's lock
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

class VBucketTimeoutTask final : public executor::Task, public HeadDeadlineListener {
 public:
  static constexpr clock::Duration kMinSleep = std::chrono::milliseconds(1);
  // How far ahead a deadline must be for the absolute re-arm (see above):
  // far more than the coarse clock ever lags a running thread.
  static constexpr clock::Duration kAbsoluteArmMargin = std::chrono::milliseconds(250);

  // Created asleep forever; schedule it, then attach it with
  // monitor.setHeadDeadlineListener(task), which arms it.
  VBucketTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                     ActiveDurabilityMonitor& monitor, clock::ClockRef clock,
                     TimeoutTaskCounters& counters);

  bool run() override;
  void headDeadlineChanged(clock::TimePoint head_deadline) override;

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
  // The coarse clock's resolution: how far a steady-timeline reading may lag.
  const clock::Duration coarse_tick_;
  std::atomic<uint64_t> rearms_{0};
};

}  // namespace syncwrite::durability
