// ExecutorPool: runs Tasks on a pool of threads over boost.asio.
//
// Threads: `num_nonio_threads` for TaskGroup::kNonIO (0 in the config means
// derived from the number of cores; the pool itself requires >= 1). Threads
// are named for `top` and /proc (NonIoPool0, NonIoPool1, …).
//
// Ids: schedule() returns the task's id; every other call takes the id, and
// is harmless for an id that is unknown, finished or cancelled.
//
// Cost contract (the durability layer depends on it):
//  - snooze() never blocks the caller on a pool thread or a timer. Pushing the
//    wake time later than the armed timer is little more than an atomic store:
//    the timer fires at the old time, sees the later wake time, and re-arms.
//    Only an earlier wake time posts work to re-arm the timer.
//  - wake() likewise posts and returns; wakes that arrive before the task runs
//    coalesce into one run.
//  - snoozeAndWait()/wakeAndWait() block until the pool has applied the change;
//    they exist for callers that must know whether the task was there.
//
// Semantics every implementation must keep (pinned by tests/executor_test):
//  - a task never runs concurrently with itself;
//  - wake of a snoozed task runs it once; snooze then wake runs it once (wake wins);
//  - cancel then snooze/wake does not revive it;
//  - run() returning true without snoozing runs again at its current wake time;
//  - a task snoozed to clock::kNever runs only when woken or snoozed;
//  - if run() throws, the exception is logged to stderr, the task is treated as
//    finished (dead), and the pool thread goes on;
//  - unregisterTaskable(owner) cancels the owner's tasks and returns only when
//    none of them is running; none of them runs afterwards. schedule() of a
//    task whose owner is shut down is refused: it returns kNoTask and the task
//    never runs.
//  - the destructor stops the threads and joins them; nothing runs afterwards.
//
// Thread-safety: every member may be called from any thread, including from
// inside a task's run() (except unregisterTaskable of the running task's own
// owner, which would wait for itself).
#pragma once

#include <cstddef>
#include <memory>

#include "clock/time.h"
#include "executor/task.h"

namespace syncwrite::executor {

class ExecutorPool {
 public:
  // Starts `num_nonio_threads` (>= 1) threads.
  explicit ExecutorPool(size_t num_nonio_threads);
  ~ExecutorPool();
  ExecutorPool(const ExecutorPool&) = delete;
  ExecutorPool& operator=(const ExecutorPool&) = delete;

  // The thread count for a config value of num_nonio_threads: the value
  // itself, or for 0 one thread per core (at least 1).
  static size_t threadsFor(size_t configured_nonio_threads);

  // Takes shared ownership and runs `task` at its wake time. Returns its id,
  // or kNoTask when the owner is shut down.
  TaskId schedule(std::shared_ptr<Task> task);

  // Asynchronous: run as soon as possible.
  void wake(TaskId id);
  // Asynchronous: the next run is due `d` from now (Duration::max(): never,
  // until woken).
  void snooze(TaskId id, clock::Duration d);

  // Synchronous forms: false when no such task is scheduled (unknown,
  // finished or cancelled).
  bool wakeAndWait(TaskId id);
  bool snoozeAndWait(TaskId id, clock::Duration d);

  // The task will not run again (a run in progress finishes). False when no
  // such task is scheduled.
  bool cancel(TaskId id);

  // See the file comment.
  void unregisterTaskable(Taskable& owner);

  size_t numThreads(TaskGroup group) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncwrite::executor
