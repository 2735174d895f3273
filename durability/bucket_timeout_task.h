// BucketTimeoutTask: the event-driven timeout timer of one bucket.
//
// One executor task per bucket, asleep (wake time clock::kNever) while no
// vbucket of the bucket has a SyncWrite, so an idle bucket runs nothing. It
// is the DeadlineListener of every monitor of the bucket: a monitor tells it,
// under the monitor's lock, when its next deadline became earlier, and the
// task keeps `armed` — the earliest deadline it was told since it last
// looked — with an atomic compare-and-swap, re-arming the pool's timer (the
// asynchronous snooze of a held task) only when that made it earlier. A
// deadline no earlier than the armed one costs the writer one atomic load.
//
// Where it runs. The task asks for its timer's runs on the executor's timer
// thread (executor::DueRun::kTimerThread): the thread that found the slot
// due resolves it, with no worker woken. At 2,000 timeouts a second that
// was up to 500 worker wake-ups a second, most of what event-driven mode
// cost beyond polling (docs/benchmarks.md, "Due runs on the timer thread").
// A run that goes on at once (a slice that yielded, a vbucket with more
// expired writes than one visit takes) goes to a worker, so the timer
// thread holds each run for at most about one slice.
//
// When it fires, run() reads the clock once and visits only the vbuckets in
// the bucket's in-flight set (vbucket_set.h: one load per 64 vbuckets):
// processTimeout(now) on each whose next deadline is before now, notifying
// that vbucket's completions at once, then arms itself for the earliest next
// deadline of them all (kNever: asleep). One run serves every vbucket due. A
// deadline that became later since it was armed (the head committed) is
// found then too: the run finds nothing due there and re-arms. A vbucket
// that left active is skipped: BucketDurability's state listener, which
// every vbucket of the bucket has, answers its writes (abortAll), and takes
// it out of the set.
//
// Bounded slices. A run that has spent `max_slice` (the clock read again
// after each vbucket it resolved writes in) stops after that vbucket, arms
// itself to run again at once (a snooze of zero: the pool's other ready
// tasks go first) and resumes at the next vbucket of the set, wrapping
// around to the ones before where it started. A timeout storm across many
// vbuckets is thus resolved in slices of about `max_slice` that take the
// vbuckets in turn, rather than in one run that holds a worker for as long
// as every expired write takes. One visit of a vbucket resolves at most
// kMaxWritesPerVisit of its expired writes; when more are left, its next
// deadline is still past, so the run arms itself to run again at once and
// the next run resolves more, in order. A slice is thus at most `max_slice`
// plus one visit, however long a single vbucket's expired prefix is.
//
// Coalescing (the timer slack). On the steady timeline the timer is armed for
// the deadline rounded UP to a multiple of `slack` (e.g. the coarse clock's
// resolution), like Linux's timer slack: the deadlines of every vbucket that
// fall in one slack-sized slot share one timer expiry and one run, instead
// of one each. A timeout is then answered at
// most `slack` (plus scheduling) after its deadline, never before it.
//
// Never early. Deadlines are on the injected clock; the pool's timers are
// real time. A write is aborted only once its deadline is strictly before
// clock.now(). In the server that clock is the precise one (the deadline was
// stamped with it too), so the timer is armed for the deadline itself, as a
// steady_clock time, plus 1 ns so that the clock read when it fires is past
// it, rounded up to the slack. A clock that may lag real time (the coarse
// clock) could still be at or before the deadline when the timer fires;
// re-arming for a time already past would run the task again at once, a spin
// until the clock caught up. So the absolute re-arm is taken only when the
// deadline is ahead of steady_clock now (a second, precise read on a lagging
// clock's path); any other deadline, and every deadline on a clock that is
// not on the steady timeline (a test's manual clock), is a sleep of
// (deadline - clock.now()) from real now, at least kMinSleep. A timer that
// fires early therefore sleeps again for at least kMinSleep; it never spins,
// and a timeout fires after its deadline, never before.
//
// Why nothing is missed. run() first stores `armed` = kNever ("looking"),
// then reads the set and each vbucket's next deadline; a writer publishes its
// earlier deadline (and the set's bit), then reads `armed`. All four are
// sequentially consistent, so either the run sees the deadline, or the
// writer sees kNever and arms the timer itself. Snoozes of concurrent
// arm-ers may land in any order, so each one, after its snooze, reads
// `armed` again and snoozes once more if it became earlier: the last snooze
// is always for the earliest deadline.
//
// Thread-safety: nextDeadlineEarlier() is called under a monitor's lock from
// any thread; run() by the pool. The set, the monitors and the counters must
// outlive every run (the owner cancels the task, detaches it from every
// monitor and unregisters its Taskable before destroying them).
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
