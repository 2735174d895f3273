#include "vbucket/vbucket_visitor_task.h"

#include <utility>

namespace syncwrite::vbucket {

VBucketVisitorTask::VBucketVisitorTask(executor::Taskable& owner, executor::ExecutorPool& pool,
                                       std::string description, const VBucketMap& map,
                                       std::unique_ptr<VBucketVisitor> visitor, StateFilter filter,
                                       clock::Duration pass_interval, const VBucketSet* candidates)
    : Task(owner, std::move(description)),
      pool_(pool),
      visitor_(std::move(visitor)),
      pass_(map, *visitor_, filter, candidates),
      pass_interval_(pass_interval.count()) {}

void VBucketVisitorTask::setPassInterval(clock::Duration d) noexcept {
  pass_interval_.store(d.count(), std::memory_order_relaxed);
}

clock::Duration VBucketVisitorTask::passInterval() const noexcept {
  return clock::Duration(pass_interval_.load(std::memory_order_relaxed));
}

void VBucketVisitorTask::runAgain() {
  pass_requested_.store(true, std::memory_order_seq_cst);
  const executor::TaskId id = this->id();
  if (id != executor::kNoTask) pool_.wake(id);
}

bool VBucketVisitorTask::run() {
  if (taskable().isShutdown()) return false;

  if (!started_ || pass_.done()) {
    // Between passes. A run here is due to the interval, a runAgain() or the
    // first schedule — or a spurious wake, when waiting for runAgain() only.
    const bool requested = pass_requested_.exchange(false, std::memory_order_seq_cst);
    if (started_ && !requested && passInterval() == clock::Duration::max()) {
      snooze(clock::Duration::max());
      return true;
    }
    pass_.restart();
    started_ = true;
  }

  chunks_run_.fetch_add(1, std::memory_order_relaxed);
  if (pass_.runChunk() == VBucketVisitPass::Progress::kPaused) {
    snooze(clock::Duration::zero());  // yield; resume where it paused
    return true;
  }
  passes_completed_.fetch_add(1, std::memory_order_release);

  // Sleep first, then look for a request: a runAgain() after the look wakes
  // the task after the snooze, so no request is lost. Aligned: every bucket's
  // periodic pass starts on the same multiples of the interval (header).
  snoozeAligned(passInterval());
  if (pass_requested_.load(std::memory_order_seq_cst)) snooze(clock::Duration::zero());
  return true;
}

}  // namespace syncwrite::vbucket
