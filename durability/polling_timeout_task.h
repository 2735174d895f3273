// PollingTimeoutTask: the polling timeout mechanism of one bucket.
//
// A VBucketVisitorTask whose visitor (a CappedDurationVBucketVisitor) visits
// the bucket's active vbuckets every durability_timeout_task_interval and
// calls processTimeout(now) on each monitor that has a SyncWrite in flight.
// The pass reads only the vbuckets in the bucket's in-flight set (the
// monitors keep it: active_durability_monitor.h), one load per 64 vbuckets,
// so a vbucket without a SyncWrite costs a pass a 64th of a load — not the
// cold cache lines of its VBucket and its monitor. Between vbuckets the visitor reads its own clock
// — coarse in production; durability_visitor_clock can make it the syscall clock to show what a
// slow clock source costs — and yields the thread once a chunk has run longer than
// max_vbucket_visit_duration, resuming at the next vbucket.
//
// Completions of the writes a visit aborts are called by the visitor right
// after that vbucket's processTimeout(), with no lock held.
//
// Thread-safety: as VBucketVisitorTask. The monitors and counters must outlive
// every run.
#pragma once

#include <functional>
#include <memory>

#include "clock/clock_ref.h"
#include "durability/active_durability_monitor.h"
#include "durability/bucket_timeout_task.h"
#include "executor/executor_pool.h"
#include "vbucket/vbucket_map.h"
#include "vbucket/vbucket_visitor_task.h"

namespace syncwrite::durability {

class PollingTimeoutTask final : public vbucket::VBucketVisitorTask {
 public:
  // The monitor of a vbucket id.
  using MonitorOf = std::function<ActiveDurabilityMonitor&(vbucket::Vbid)>;

  // `timeout_clock` reads `now` for processTimeout (the clock deadlines are
  // on); `visitor_clock` decides when a chunk pauses. `in_flight` (the
  // monitors' set) must outlive the task.
  PollingTimeoutTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                     const vbucket::VBucketMap& map, const vbucket::VBucketSet& in_flight,
                     MonitorOf monitor_of, clock::ClockRef timeout_clock,
                     clock::ClockRef visitor_clock, clock::Duration max_chunk_duration,
                     clock::Duration interval, TimeoutTaskCounters& counters);

  bool run() override;

  // max_vbucket_visit_duration changed: from the visitor's next clock check
  // on, a chunk pauses once it has run longer than `d`.
  void setMaxChunkDuration(clock::Duration d) noexcept;
  clock::Duration maxChunkDuration() const noexcept;

 private:
  TimeoutTaskCounters& counters_;
};

}  // namespace syncwrite::durability
