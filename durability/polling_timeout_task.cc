#include "durability/polling_timeout_task.h"

#include <utility>

namespace syncwrite::durability {

namespace {

class TimeoutVisitor final : public vbucket::CappedDurationVBucketVisitor {
 public:
  TimeoutVisitor(PollingTimeoutTask::MonitorOf monitor_of, clock::ClockRef timeout_clock,
                 clock::ClockRef visitor_clock, clock::Duration max_chunk_duration,
                 TimeoutLateness& lateness)
      : CappedDurationVBucketVisitor(visitor_clock, max_chunk_duration),
        monitor_of_(std::move(monitor_of)),
        timeout_clock_(timeout_clock),
        lateness_(lateness) {}

  void visitBucket(vbucket::VBucket& vb) override {
    ActiveDurabilityMonitor& monitor = monitor_of_(vb.id());
    if (!monitor.hasSyncWrites()) {
      noteCheapVisit();  // resolved since the set was read: the clock need not be read after it
      return;
    }
    const clock::TimePoint earliest = monitor.nextDeadline();
    const clock::TimePoint now = timeout_clock_.now();
    if (earliest >= now) return;  // nothing expired: no lock, no second clock read
    monitor.processTimeout(now, resolved_);
    const size_t answered = resolved_.size();
    resolved_.notify();
    if (answered > 0) lateness_.record(timeout_clock_.now() - earliest, answered);
  }

 private:
  const PollingTimeoutTask::MonitorOf monitor_of_;
  const clock::ClockRef timeout_clock_;
  TimeoutLateness& lateness_;
  // Notified after each vbucket; kept so that its capacity serves the next
  // (the pool runs one chunk of a pass at a time).
  ResolvedWrites resolved_;
};

}  // namespace

PollingTimeoutTask::PollingTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                                       const vbucket::VBucketMap& map,
                                       const vbucket::VBucketSet& in_flight, MonitorOf monitor_of,
                                       clock::ClockRef timeout_clock, clock::ClockRef visitor_clock,
                                       clock::Duration max_chunk_duration, clock::Duration interval,
                                       TimeoutTaskCounters& counters)
    : VBucketVisitorTask(
          owner, pool, "durability timeout polling", map,
          std::make_unique<TimeoutVisitor>(std::move(monitor_of), timeout_clock, visitor_clock,
                                           max_chunk_duration, counters.lateness),
          vbucket::StateFilter{vbucket::VBucketState::kActive}, interval, &in_flight),
      counters_(counters) {}

bool PollingTimeoutTask::run() {
  counters_.runs.fetch_add(1, std::memory_order_relaxed);
  return VBucketVisitorTask::run();
}

void PollingTimeoutTask::setMaxChunkDuration(clock::Duration d) noexcept {
  static_cast<vbucket::CappedDurationVBucketVisitor&>(visitor()).setMaxChunkDuration(d);
}

clock::Duration PollingTimeoutTask::maxChunkDuration() const noexcept {
  return static_cast<const vbucket::CappedDurationVBucketVisitor&>(visitor()).maxChunkDuration();
}

}  // namespace syncwrite::durability
