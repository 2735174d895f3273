// BucketTimeoutTask: the event-driven timeout timer of one bucket.
//
// One executor task per bucket, asleep (clock::kNever) while no vbucket has a
// SyncWrite: an idle bucket runs nothing. As every monitor's DeadlineListener
// it is told, under that monitor's lock, when its next deadline became
// earlier; it keeps `armed`, the earliest deadline told since it last looked,
// by compare-and-swap, and re-arms the pool's timer (the asynchronous snooze
// of a held task) only when that made it earlier. A deadline no earlier than
// the armed one costs the writer one atomic load.
//
// A run (on the executor's timer thread, DueRun::kTimerThread; one that goes
// on at once runs on a worker) reads the clock once and visits the vbuckets
// of the in-flight set: processTimeout(now) on each whose next deadline is
// before now, notifying its completions at once, then arms for the earliest
// next deadline of them all. A vbucket that left active is skipped (the state
// listener answers its writes). Bounded slices: a run that has spent
// `max_slice` (timed after each vbucket it resolved writes in) snoozes zero
// and resumes at the next vbucket, wrapping around; a visit resolves at most
// kMaxWritesPerVisit writes, the rest staying due, in order. A run is thus at
// most `max_slice` plus one visit. docs/benchmarks.md, "Due runs on the timer
// thread".
//
// Never early; on the precise clock, late by at most `slack` plus scheduling.
// A write is aborted only once its deadline is strictly before clock.now(). A
// deadline ahead of steady_clock now, on a clock on the steady timeline, arms
// the timer for deadline + 1 ns (so the read when it fires is past it) rounded
// up to a multiple of `slack`, so the deadlines in one slot share one run. Any
// other (a lagging clock not yet past it, a clock off the steady timeline such
// as a test's manual clock) sleeps (deadline - clock.now()) from real now, at
// least kMinSleep; one already past runs at once. An early timer never spins.
//
// Why nothing is missed: run() first stores `armed` = kNever ("looking"), then
// reads the set and each next deadline; a writer publishes its deadline (and
// the set's bit), then reads `armed`. All sequentially consistent: either the
// run sees the deadline or the writer sees kNever and arms the timer itself.
// Each arm-er re-reads `armed` after its snooze and snoozes again if it became
// earlier, so the last snooze is for the earliest deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "clock/clock_ref.h"
#include "durability/active_durability_monitor.h"
#include "durability/timeout_lateness.h"
#include "executor/executor_pool.h"
#include "executor/task.h"
#include "vbucket/vbucket_set.h"

namespace syncwrite::durability {

// Counters shared by a bucket's timeout tasks (relaxed atomics: statistics).
struct TimeoutTaskCounters {
  std::atomic<uint64_t> runs{0};
  // Event-driven runs that stopped at max_slice with vbuckets still to visit.
  std::atomic<uint64_t> slices_yielded{0};
  // How late the timeouts both modes resolved were answered.
  TimeoutLateness lateness;
  std::atomic<uint64_t> rearms{0};  // of retired tasks; live ones keep their own
};

// Thread-safety: nextDeadlineEarlier() is called under a monitor's lock from
// any thread; run() by the pool. The set, the monitors and the counters must
// outlive every run (the owner detaches the task from every monitor, cancels
// it and unregisters its Taskable before destroying them).
class BucketTimeoutTask final : public executor::Task, public DeadlineListener {
 public:
  static constexpr clock::Duration kMinSleep = std::chrono::milliseconds(1);
  // The most expired writes one visit of a vbucket resolves (see "Bounded
  // slices").
  static constexpr size_t kMaxWritesPerVisit = 1024;
  // The monitor of a vbucket id.
  using MonitorOf = std::function<ActiveDurabilityMonitor&(vbucket::Vbid)>;

  // Created asleep forever; schedule it, then attach it to each monitor with
  // monitor.setDeadlineListener(task), which arms it for that monitor's next
  // deadline. `clock` is the clock processTimeout() is given `now` from, and
  // the one a slice is timed on; `in_flight` the set the monitors keep;
  // `slack` >= 0 (0: no rounding); `max_slice` > 0 (see "Bounded slices").
  BucketTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                    const vbucket::VBucketSet& in_flight, MonitorOf monitor_of,
                    clock::ClockRef clock, clock::Duration slack, clock::Duration max_slice,
                    TimeoutTaskCounters& counters);

  bool run() override;
  void nextDeadlineEarlier(clock::TimePoint next_deadline) override;

  // The earliest deadline the timer is armed for (kNever: asleep forever).
  clock::TimePoint armedDeadline() const noexcept {
    return clock::TimePoint(clock::Duration(armed_.load(std::memory_order_acquire)));
  }
  // How many times a writer made the armed deadline earlier. Kept here rather
  // than in the shared counters so that the write path does no second atomic
  // read-modify-write; the owner adds it to TimeoutTaskCounters::rearms when
  // it retires the task.
  uint64_t rearms() const noexcept { return rearms_.load(std::memory_order_relaxed); }
  clock::Duration slack() const noexcept { return slack_; }

  // The slice length; any thread, takes effect from the next vbucket.
  void setMaxSlice(clock::Duration max_slice) noexcept {
    max_slice_.store(max_slice.count(), std::memory_order_relaxed);
  }
  clock::Duration maxSlice() const noexcept {
    return clock::Duration(max_slice_.load(std::memory_order_relaxed));
  }

 private:
  // Sets the pool's wake time for `deadline` (see "Never early").
  void snoozeFor(clock::Duration::rep deadline);
  // snoozeFor(armed_) until armed_ no longer moves (see "Why nothing is missed").
  void snoozeForArmed(clock::Duration::rep deadline);

  executor::ExecutorPool& pool_;
  const vbucket::VBucketSet& in_flight_;
  const MonitorOf monitor_of_;
  const clock::ClockRef clock_;
  const clock::Duration slack_;
  TimeoutTaskCounters& counters_;
  std::atomic<clock::Duration::rep> armed_;
  std::atomic<uint64_t> rearms_{0};
  std::atomic<clock::Duration::rep> max_slice_;
  // Where the next run starts in the in-flight set (run() only: the pool
  // never runs one task on two workers at once).
  size_t resume_from_ = 0;
};

}  // namespace syncwrite::durability
