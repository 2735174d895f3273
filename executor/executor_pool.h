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
//    wake time later than the armed timer is little more than an atomic store
//    (plus, for snooze(id), the id lookup under one of 32 shard locks;
//    snooze(Task&) skips it): the timer fires at the
//    old time, sees the later wake time, and re-arms. Only an earlier wake time
//    asks the timer thread to settle the task — queued for its next planned
//    wake-up when that comes first and soon, else posted (timer_thread.h) —
//    and while such a request is pending further ones coalesce. The timer of
//    a task whose wake time moved is armed early, at a quarter of the
//    remaining sleep (timer_thread.h), so that a re-snooze to a somewhat
//    earlier time than the last is usually a store too.
//  - wake() likewise returns without waiting; the caller itself queues the task
//    for a worker. Wakes that arrive before the task runs coalesce into one run.
//  - snoozeAndWait() blocks until the timer thread has re-armed the task's
//    timer (and settled every request queued before it); wakeAndWait()
//    applies the wake in the caller, like wake(). They
//    exist for callers that must know whether the task was there.
//  - a worker that runs out of tasks spins before it sleeps, so schedule-and-run
//    costs no system call while work keeps coming: up to 50 us after a spin
//    that found work, halving after each one that did not, down to 4 us
//    (ready_queue.h). Tasks that come one at a time, far apart, cost little
//    spinning, and an idle pool costs nothing. The ready queue is a lock-free
//    ring: no mutex between schedule() or wake() and the worker.
//
// Threads: the NonIO workers (NonIoPool0, …) run tasks; one more thread,
// NonIoTimer, runs a boost::asio io_context holding a deadline map of the
// sleeping tasks and one steady_timer armed for its earliest entry
// (timer_thread.h).
//
// Due runs. A task constructed with DueRun::kTimerThread has the runs the
// timer thread finds due run on NonIoTimer itself, in that wake-up: no
// worker is woken for them (docs/benchmarks.md, "Due runs on the timer
// thread": the event-driven timeout timer). Those are the runs its deadline
// brings, and a snooze the timer thread settles after its time has passed.
// Runs queued without the timer thread go to a worker: wake(), schedule()
// of a task due at once, a snooze to a past time made while the task's
// timer is not yet due, and run() returning true with its wake time past.
// A due run delays every other timer by its own length, so only tasks whose
// runs are short and bounded should ask for it. Tasks default to
// DueRun::kWorker: NonIoTimer runs no code of theirs.
//
// A due run may call any member. snoozeAndWait(), and the wait inside
// unregisterTaskable(), then do their work in place rather than wait for
// the timer thread. Two rules keep it from deadlocking, because a call that
// waits for the timer thread (snoozeAndWait, unregisterTaskable) also waits
// for any due run in progress there:
//  - a due run must not call unregisterTaskable() for an owner whose other
//    tasks may call snoozeAndWait() or unregisterTaskable() themselves;
//  - no thread may make those calls while holding a lock that a due run (or
//    what it calls: the timeout task's completions) takes.
//
// Semantics every implementation must keep (pinned by tests/executor_test):
//  - a task never runs concurrently with itself;
//  - wake of a snoozed task runs it once; snooze then wake runs it once (wake wins:
//    wake sets the wake time to the epoch, i.e. due now);
//  - a wake that arrives while the task runs causes one more run after it, even
//    if run() snoozes itself (a snooze() from another thread during a run is
//    simply overwritten if run() snoozes afterwards);
//  - cancel then snooze/wake does not revive it;
//  - run() returning true without snoozing runs again at its current wake time
//    (after a wake that is now: it runs again at once);
//  - a task snoozed to clock::kNever runs only when woken or snoozed;
//  - if run() throws, the exception is logged to stderr, the task is treated as
//    finished (dead), and the pool thread goes on;
//  - a Task object can be scheduled once: scheduling it again returns kNoTask;
//  - unregisterTaskable(owner) marks the owner shut down, cancels its tasks and
//    returns only when none of them is running — including a task of the
//    owner cancelled earlier whose run is still in progress; none of them runs
//    afterwards.
//    schedule() of a task whose owner is shut down is refused: it returns
//    kNoTask and the task never runs. Called from inside one of the owner's own
//    tasks, it waits for all the others (not for itself). When it returns the
//    pool has dropped its references to those tasks, except the one of a
//    run() in progress on the calling thread and of a snooze or wake racing
//    with it; a Task's destructor must not rely on its owner still existing.
//  - the destructor lets runs in progress finish, stops the threads and joins
//    them; tasks not yet run are dropped, and nothing runs afterwards.
//
// Thread-safety: every member may be called from any thread, including from
// inside a task's run().
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

  // See the file comment.
  void unregisterTaskable(Taskable& owner);

  size_t numThreads(TaskGroup group) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncwrite::executor
