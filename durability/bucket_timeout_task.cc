#include "durability/bucket_timeout_task.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "clock/precise_clock.h"

namespace syncwrite::durability {

namespace {

// Armed "before every deadline": a slice that yielded runs again at once,
// and no writer's deadline is earlier, so none re-arms it meanwhile.
constexpr clock::Duration::rep kRunNowRep = std::numeric_limits<clock::Duration::rep>::min();

}  // namespace

BucketTimeoutTask::BucketTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                                     const vbucket::VBucketSet& in_flight, MonitorOf monitor_of,
                                     clock::ClockRef clock, clock::Duration slack,
                                     clock::Duration max_slice, TimeoutTaskCounters& counters)
    : Task(owner, "durability timeouts", executor::TaskGroup::kNonIO, clock::kNever,
           executor::DueRun::kTimerThread),
      pool_(pool),
      in_flight_(in_flight),
      monitor_of_(std::move(monitor_of)),
      clock_(clock),
      slack_(std::max(slack, clock::Duration::zero())),
      counters_(counters),
      armed_(clock::kNeverRep),
      max_slice_(max_slice.count()) {}

bool BucketTimeoutTask::run() {
  if (taskable().isShutdown()) return false;
  // "Looking": a deadline made earlier from here on is either seen below or
  // arms the timer itself.
  armed_.store(clock::kNeverRep, std::memory_order_seq_cst);
  const clock::TimePoint now = clock_.now();
  const clock::Duration max_slice = maxSlice();
  clock::Duration::rep next = clock::kNeverRep;
  // From where the last slice stopped to the end of the set, then from its
  // start up to there.
  const size_t size = in_flight_.size();
  const size_t start = resume_from_ < size ? resume_from_ : 0;
  resume_from_ = 0;
  bool yielded = false;
  ResolvedWrites resolved;  // notified after each vbucket; its capacity reused
  for (int lap = 0; lap < 2 && !yielded; ++lap) {
    const size_t end = lap == 0 ? size : start;
    for (size_t vb = in_flight_.nextFrom(lap == 0 ? start : 0); vb < end;
         vb = in_flight_.nextFrom(vb + 1)) {
      ActiveDurabilityMonitor& monitor = monitor_of_(static_cast<vbucket::Vbid>(vb));
      // Left active, its listener not yet run: that listener answers its
      // writes (abortAll), and processTimeout() would resolve none of them
      // (ActiveDurabilityMonitor::resolvesLocked), so its past deadline
      // must not bring the task straight back.
      if (monitor.vbucket().state() != vbucket::VBucketState::kActive) continue;
      if (const clock::TimePoint earliest = monitor.nextDeadline(); earliest < now) {
        monitor.processTimeout(now, resolved, kMaxWritesPerVisit);
        const size_t answered = resolved.size();
        resolved.notify();
        const clock::TimePoint after = clock_.now();
        counters_.lateness.record(after - earliest, answered);
        if (after - now >= max_slice && in_flight_.nextFrom(vb + 1) < size) {
          resume_from_ = vb + 1;
          yielded = true;
          break;
        }
      }
      next = std::min(next, monitor.nextDeadline().time_since_epoch().count());
    }
  }
  if (yielded) {
    next = kRunNowRep;
    counters_.slices_yielded.fetch_add(1, std::memory_order_relaxed);
  }
  // The earliest of what was found and what writers armed meanwhile.
  clock::Duration::rep current = armed_.load(std::memory_order_seq_cst);
  while (next < current &&
         !armed_.compare_exchange_weak(current, next, std::memory_order_seq_cst)) {
  }
  // Always snoozed, even to kNever: the wake time is still the one that fired.
  snoozeForArmed(armed_.load(std::memory_order_seq_cst));
  // Counted once the run's work is done, so that a test that sees the count
  // rise knows this run's timeouts have been processed.
  counters_.runs.fetch_add(1, std::memory_order_release);
  return true;
}

void BucketTimeoutTask::nextDeadlineEarlier(clock::TimePoint next_deadline) {
  const clock::Duration::rep deadline = next_deadline.time_since_epoch().count();
  clock::Duration::rep current = armed_.load(std::memory_order_seq_cst);
  while (deadline < current) {
    if (armed_.compare_exchange_weak(current, deadline, std::memory_order_seq_cst)) {
      // Only the thread whose arm made it earlier re-arms; the callers hold
      // different monitors' locks, so the count is an atomic.
      rearms_.fetch_add(1, std::memory_order_relaxed);
      if (id() != executor::kNoTask) snoozeForArmed(deadline);
      return;
    }
  }
}

void BucketTimeoutTask::snoozeForArmed(clock::Duration::rep deadline) {
  snoozeFor(deadline);
  for (clock::Duration::rep now_armed = armed_.load(std::memory_order_seq_cst);
       now_armed < deadline; now_armed = armed_.load(std::memory_order_seq_cst)) {
    deadline = now_armed;
    snoozeFor(deadline);
  }
}

void BucketTimeoutTask::snoozeFor(clock::Duration::rep deadline_rep) {
  if (deadline_rep == clock::kNeverRep) {
    pool_.snooze(*this, clock::Duration::max());
    return;
  }
  if (deadline_rep == kRunNowRep) {
    pool_.snooze(*this, clock::Duration::zero());
    return;
  }
  const clock::TimePoint deadline{clock::Duration(deadline_rep)};
  if (clock_.onSteadyTimeline() && deadline >= clock::PreciseClock::now()) {
    // Ahead in real time: due the instant real time passes it. 1 ns later,
    // so that a precise read when it fires is strictly past the deadline;
    // then up to the slack's grid, so that nearby deadlines share the run.
    clock::Duration::rep wake = deadline_rep + 1;
    if (const clock::Duration::rep slack = slack_.count(); slack > 0) {
      wake = (wake + slack - 1) / slack * slack;
    }
    pool_.snoozeUntil(*this, clock::TimePoint(clock::Duration(wake)));
    return;
  }
  const clock::TimePoint now = clock_.now();
  if (deadline < now) {
    pool_.snooze(*this, clock::Duration::zero());  // expired already: run now
    return;
  }
  // Due in real time but not yet by a lagging clock, or a clock off the
  // steady timeline: relative to real now, and at least kMinSleep.
  pool_.snooze(*this, std::max(deadline - now, kMinSleep));
}

}  // namespace syncwrite::durability
