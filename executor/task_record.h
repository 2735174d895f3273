// TaskRecord (internal to executor/): the pool's bookkeeping for one Task. It
// is a private member of Task, so scheduling allocates nothing (an allocation
// made by the scheduling thread and freed by a worker costs a contended malloc
// arena lock per task with glibc: it halved OneShotScheduleRun). It holds no
// asio object, so a Task may outlive its pool.
//
// Who may move a task between states (RecordState):
//
//   kWaiting --(due, or woken: whoever wins the CAS)--> kQueued
//   kQueued  --(the worker that pops it)--------------> kRunning
//   kRunning --(that worker, after run() returns true)-> kWaiting
//   any      --(cancel, unregister, run() false/throws,
//                 the pool's destruction)-----------------> kDead  (final)
//
// Every move out of kWaiting is a compare-and-swap, so a task is queued at most
// once however many wakes and timers race for it: that is how wakes coalesce,
// and why a task never runs concurrently with itself.
//
// The timer protocol. `armed` is the time at which the timer thread will next
// look at a waiting task (kNeverRep: never; 0 while queued or running, when the
// worker will look after the run). Invariant while kWaiting: armed <= the
// task's wake time, or a settle request is on its way to the timer thread. So
// pushing the wake time later needs no more than a store: the timer fires at
// `armed`, sees the later wake time and re-arms. A wake time earlier than
// `armed` must make a settle request (queued or posted, timer_thread.h;
// coalesced by `settle_pending`).
//
// The race between "the timer thread arms for wake time W" and "a client
// snoozes to W' < W" is closed Dekker-style with sequentially consistent
// operations: the client stores the wake time, then loads `armed`; the timer
// thread stores `armed`, then reloads the wake time. At least one of them sees
// the other's store, so either the client makes a settle request or the timer
// thread arms for W' itself (both is harmless: settling is idempotent).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>

#include "clock/time.h"

namespace syncwrite::executor {

class Task;
class TaskTable;
enum class RecordState : uint8_t { kWaiting, kQueued, kRunning, kDead };

// The timer thread's deadlines: when to look at which task (timer_thread.h).
using DeadlineMap = std::multimap<clock::Duration::rep, std::shared_ptr<Task>>;

struct TaskRecord {
  // Hot on the snooze path: keep together.
  std::atomic<clock::Duration::rep> armed{clock::kNever.time_since_epoch().count()};
  std::atomic<bool> settle_pending{false};
  std::atomic<RecordState> state{RecordState::kWaiting};
  // Set by wake(); cleared just before each run. A wake that arrives during a
  // run therefore causes another run, even if run() snoozes itself afterwards.
  std::atomic<bool> wake_requested{false};
  // True from just before a worker claims the task until its run is over;
  // unregisterTaskable() waits for it to fall.
  std::atomic<bool> in_run{false};
  // True while the task has an entry in the timer thread's deadline map (which
  // holds a reference to it): cancel asks the timer thread to drop it.
  std::atomic<bool> timer_pending{false};

  // The pool's own reference to a scheduled task, which travels with it: held
  // here while the task is kWaiting (it keeps a sleeping task alive), by the
  // ready queue while kQueued, by the worker while kRunning. Whoever moves the
  // task out of kWaiting — to kQueued (the CAS winner) or to kDead (the
  // exchange in retire) — moves it out; the worker puts it back before its
  // task returns to kWaiting. So a finished one-shot task costs one reference
  // count decrement on the worker, not two.
  std::shared_ptr<Task> self;
  // The table holding the task's id entry (task_table.h), for ~Task to
  // unlink it; exchanged to null by ~Task or by the pool's destruction.
  std::atomic<TaskTable*> table{nullptr};

  // Timer thread only.
  bool has_deadline = false;
  DeadlineMap::iterator deadline;  // valid while has_deadline
  clock::Duration::rep armed_for =
      clock::kNever.time_since_epoch().count();  // wake time of the last arm
};

}  // namespace syncwrite::executor
