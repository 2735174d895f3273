// VBucketVisitorTask: runs a VBucketVisitor over a VBucketMap as an executor
// task, a chunk per run.
//
// Each run() runs one chunk of the current pass (VBucketVisitPass). When the
// visitor pauses, the task yields its thread — snooze(0), return true — and
// the next run resumes at the vbucket where it paused; so every vbucket whose
// state is in the filter is visited exactly once per pass, however many
// pauses it takes. When a pass ends, the task sleeps:
//  - until the next multiple of the pass interval on the steady clock, then
//    starts the next pass (periodic users, e.g. polling timeouts every
//    durability_timeout_task_interval). Passes therefore start an interval
//    apart on average, and the tasks of every bucket with the same interval
//    start theirs in the same instant: the pool's timer and workers wake once
//    for all of them (Task::snoozeAligned). A pass longer than the interval
//    is followed by the next at the next multiple.
//  - or, with the interval Duration::max() (the default), until runAgain().
// runAgain() asks for another pass: if one is under way it finishes first and
// the next starts at once (requests coalesce); if the task is asleep it is
// woken. A pass is never restarted part-way, which is what keeps visits
// exactly-once per pass.
//
// The first pass starts when the task is scheduled. The task ends (run()
// returns false) when its owner is shut down.
//
// Thread-safety: run() is called by the pool, never concurrently with itself.
// runAgain(), setPassInterval() and the counters may be called from any
// thread. The map must outlive the task; the task owns the visitor.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "clock/time.h"
#include "executor/executor_pool.h"
#include "executor/task.h"
#include "vbucket/vbucket_map.h"
#include "vbucket/vbucket_visit_pass.h"
#include "vbucket/vbucket_visitor.h"

namespace syncwrite::vbucket {

class VBucketVisitorTask : public executor::Task {
 public:
  // `pool` is the pool the task will be scheduled on (runAgain() wakes it
  // there). `candidates`: as VBucketVisitPass's.
  VBucketVisitorTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                     std::string description, const VBucketMap& map,
                     std::unique_ptr<VBucketVisitor> visitor,
                     StateFilter filter = StateFilter::all(),
                     clock::Duration pass_interval = clock::Duration::max(),
                     const VBucketSet* candidates = nullptr);

  bool run() override;

  // Another pass after the current one (or now, if none is running).
  void runAgain();

  // Passes start on multiples of it (see above); zero: one after another;
  // Duration::max(): only on runAgain(). Takes effect when a pass ends.
  void setPassInterval(clock::Duration d) noexcept;
  clock::Duration passInterval() const noexcept;

  uint64_t passesCompleted() const noexcept {
    return passes_completed_.load(std::memory_order_acquire);
  }
  uint64_t chunksRun() const noexcept { return chunks_run_.load(std::memory_order_relaxed); }

  VBucketVisitor& visitor() noexcept { return *visitor_; }
  const VBucketVisitor& visitor() const noexcept { return *visitor_; }

 private:
  executor::ExecutorPool& pool_;
  const std::unique_ptr<VBucketVisitor> visitor_;
  VBucketVisitPass pass_;  // touched only by run()
  bool started_ = false;   // touched only by run()

  std::atomic<bool> pass_requested_{false};
  std::atomic<clock::Duration::rep> pass_interval_;
  std::atomic<uint64_t> passes_completed_{0};
  std::atomic<uint64_t> chunks_run_{0};
};

}  // namespace syncwrite::vbucket
