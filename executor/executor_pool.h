// ExecutorPool: runs Tasks on `num_nonio_threads` workers for TaskGroup::kNonIO
// (NonIoPool0, …) and one timer thread, NonIoTimer: a deadline map of the
// sleeping tasks and one asio steady_timer for its earliest entry
// (timer_thread.h). schedule() returns a task's id; every other call takes it,
// harmless for an id unknown, finished or cancelled. Every member may be
// called from any thread, including from inside a task's run().
//
// Costs (the durability layer depends on them). snooze() never blocks: to a
// wake time no earlier than the armed timer it is an atomic store (plus, for
// snooze(id), the id lookup under one of 32 shard locks); the timer re-arms
// when it fires. An earlier one asks the timer thread to settle the task
// (coalesced while pending; timer_thread.h says when it posts). A moved wake
// time is armed early, at a quarter of the remaining sleep, so a re-snooze to
// a somewhat earlier time is usually a store too. wake() returns at once: the
// caller queues the task for a worker in a lock-free ring. snoozeAndWait()
// blocks until the timer thread has re-armed the task (and settled every
// request before it). A worker out of tasks spins before it sleeps: 50 us
// after a spin that found work, halving after each that did not, to 4 us.
//
// Due runs. A task made with DueRun::kTimerThread has the runs the timer
// thread finds due (its deadline, or a snooze the thread settles after its
// time) run on NonIoTimer, waking no worker; its other runs (wake(), a past
// snooze made before its timer fired, run() returning true with its wake time
// past) go to a worker. A due run delays every other timer by its length:
// only short, bounded runs should ask for it. It may call any member, but as
// snoozeAndWait() and unregisterTaskable() wait for a due run in progress, a
// due run must not unregisterTaskable() an owner whose tasks make those calls,
// and no thread may make them holding a lock a due run (or its completions) takes.
//
// Semantics (pinned by tests/executor_test): a task never runs concurrently
// with itself; wakes before a run coalesce into one, and wake beats snooze; a
// wake during a run causes one more run even if run() snoozes (another
// thread's snooze during a run is overwritten if run() snoozes); cancel then
// snooze/wake does not revive; run() returning true without snoozing runs
// again at its wake time; a task snoozed to clock::kNever runs only when woken
// or snoozed; a throwing run() is logged to stderr and the task is dead; a Task
// is scheduled once (again: kNoTask). unregisterTaskable(): see below. The
// destructor lets runs in progress finish and joins the threads; tasks not yet
// run are dropped, and nothing runs afterwards.
#pragma once

#include <cstddef>
#include <memory>

#include "clock/time.h"
#include "executor/task.h"

namespace syncwrite::executor {

class ExecutorPool {
 public:
  // Starts `num_nonio_threads` workers (0 is taken as 1) and the timer thread.
  explicit ExecutorPool(size_t num_nonio_threads);
  ~ExecutorPool();
  ExecutorPool(const ExecutorPool&) = delete;
  ExecutorPool& operator=(const ExecutorPool&) = delete;

  // The thread count for a config value of num_nonio_threads: the value
  // itself, or for 0 one thread per core (at least 1).
  static size_t threadsFor(size_t configured_nonio_threads);

  // Takes shared ownership and runs `task` at its wake time. Returns its id,
  // or kNoTask (and drops the reference) when the owner is shut down or the
  // task was scheduled before.
  TaskId schedule(std::shared_ptr<Task> task);

  // Asynchronous: run as soon as possible.
  void wake(TaskId id);
  // Asynchronous: the next run is due `d` from now (Duration::max(): never,
  // until woken).
  void snooze(TaskId id, clock::Duration d);
  // The same for a task the caller holds (a task re-arming itself): when the
  // new wake time is no earlier than the armed timer, it is the store alone —
  // no id lookup, no lock. Otherwise it goes on as snooze(task.id(), d). A
  // task not scheduled on this pool (or cancelled) is not revived; its wake
  // time is only stored.
  void snooze(Task& task, clock::Duration d);
  // The same with the wake time given as a steady_clock time: when it is no
  // earlier than the armed timer, no clock is read either.
  void snoozeUntil(Task& task, clock::TimePoint wake);

  // Synchronous forms: false when no such task is scheduled (unknown,
  // finished or cancelled). snoozeAndWait() costs a round trip to the timer
  // thread (a few microseconds); must not be called while the pool is being
  // destroyed.
  bool wakeAndWait(TaskId id);
  bool snoozeAndWait(TaskId id, clock::Duration d);

  // The task will not run again (a run in progress finishes). False when no
  // such task is scheduled.
  bool cancel(TaskId id);

  // Marks `owner` shut down (a later schedule() of its tasks returns kNoTask
  // and they never run), cancels its tasks and returns only when none of them
  // is running, a task cancelled earlier included; none runs afterwards. From
  // inside one of the owner's tasks it waits for all the others, not itself.
  // On return the pool holds no reference to them but that of a run() in
  // progress on the calling thread or of a racing snooze or wake: a Task's
  // destructor must not rely on its owner still existing. See "Due runs".
  void unregisterTaskable(Taskable& owner);

  size_t numThreads(TaskGroup group) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncwrite::executor
