// TimerThread (internal to executor/): one thread running a boost::asio
// io_context that decides when sleeping tasks are due and moves them to the
// ReadyQueue, so a long run() never delays another task's timer. A task with
// DueRun::kTimerThread (executor_pool.h) is instead claimed (kWaiting to
// kQueued, as a queue would) and, once the wake-up's expired entries are
// settled, run here through the pool's run protocol (RunDue); its re-arm is a
// settle request like any other, drained before the thread sleeps.
//
// Timers: a deadline map (time -> task, each task knowing its entry) and one
// steady_timer armed for the earliest entry; no asio object lives in a Task,
// so a Task may outlive the pool. Re-arming is a map erase + insert here. The
// record's `armed` atomic publishes where the entry is (task_record.h keeps it
// at or before the wake time). Guarantees: a task is never queued before its
// wake time, and a timed one at most kSlack (plus scheduling) after it.
//
// Early arming: for a wake time W that changed since the task was last armed
// (and at least kEarlyArmMin away), the entry goes at now + (W - now) /
// kEarlyArmDivisor, and at W once that passes with W unchanged. A task
// re-snoozed to varying times (the per-bucket SyncWrite timer) then takes a
// snooze to anything later than that point as a plain atomic store, for one
// extra expiry per changed interval.
//
// Timer slack: a sleep of kExactBelow or more is placed at its time rounded
// up to a multiple of kSlack on the steady clock's epoch (as Linux's timer
// slack), so periodic tasks in one slot expire in one wake-up; shorter sleeps
// are placed exactly.
//
// Settling without a post: a request whose slot is no earlier than the next
// planned wake-up (`planned_`), when that is at most kQueueWithin away, is
// only queued and drained at that wake-up; otherwise it posts. After a wake-up
// that queued tasks for the workers, the thread plans one more (the tick) at
// the start of the slot after next, so a task that re-arms a slot or more
// ahead after its run (the flusher, the polling task) costs no post; a tick
// that finds nothing plans no further one, and an idle pool plans none.
// The race between a client queueing then reading planned_, and the thread
// publishing planned_ then reading the queue's length, is closed Dekker-style
// (both sequentially consistent): either the client posts or the thread
// drains the request before it sleeps.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/mutex.h"
#include "executor/ready_queue.h"
#include "executor/task.h"
#include "executor/task_access.h"

namespace syncwrite::executor {

class TimerThread {
 public:
  using TaskPtr = std::shared_ptr<Task>;
  static constexpr TimeRep kEarlyArmDivisor = 4;
  // Below this much sleep the entry is placed at the wake time itself.
  static constexpr std::chrono::nanoseconds kEarlyArmMin = std::chrono::milliseconds(10);
  static constexpr std::chrono::nanoseconds kSlack = std::chrono::milliseconds(1);
  // Sleeps shorter than this are placed exactly. Half a slot: a snooze of
  // one slot measured from a clock read just before the pool's own read is
  // still rounded.
  static constexpr std::chrono::nanoseconds kExactBelow = kSlack / 2;
  static constexpr size_t kQueuedReserve = 64;
  // A settle request is queued (not posted) only for a planned wake-up at
  // most this far off; the tick, two slots on, falls well within it.
  static constexpr std::chrono::nanoseconds kQueueWithin = 10 * kSlack;

  // Where an entry for time `at`, placed at `now`, goes: `at` rounded up to a
  // multiple of kSlack, or `at` itself for a sleep shorter than kExactBelow
  // (and for kNeverRep).
  static TimeRep slotOf(TimeRep at, TimeRep now) noexcept;

  // Runs a task claimed for a due run on this thread (DueRun::kTimerThread):
  // the pool's run protocol, given the pool's reference. Called on the timer
  // thread only, after the wake-up's expired entries are settled.
  using RunDue = std::function<void(TaskPtr)>;

  // Starts the thread, named `name`. `run_due` runs the tasks that ask for
  // their due runs here.
  TimerThread(ReadyQueue& ready, const char* name, RunDue run_due);
  // stop(), then drops every deadline (and the references they hold).
  ~TimerThread();

  // Stops the io_context and joins the thread; nothing is settled afterwards.
  void stop();

  // Asynchronous: the timer thread re-reads the task's wake time and places,
  // moves or removes its deadline, or queues the task if it is due. `wake` is
  // the wake time the caller stored at `now`: the request wakes the thread
  // only if the task's slot comes before the thread's next planned wake-up,
  // or that wake-up is more than kQueueWithin away. Coalesced: while a
  // request for the task is pending, further ones cost one exchange and that
  // comparison.
  void requestSettle(const TaskPtr& task, TimeRep wake, TimeRep now);

  // Synchronous form of requestSettle(): returns once the timer thread has
  // settled the task, and every request queued before it. On the timer
  // thread itself (a due run's call), it settles them there and then.
  void settleAndWait(const TaskPtr& task);

  // Removes the deadlines of `tasks` (dead tasks) and settles the queued
  // requests, dropping the references both hold to dead tasks; with `wait`,
  // returns once done (on the timer thread, done there and then).
  void release(std::vector<TaskPtr> tasks, bool wait);

  // True on this TimerThread's own thread.
  bool onThisThread() const noexcept;

  // From now on, a task found due is queued for the workers whatever its
  // DueRun (the pool's destructor calls it before it stops the workers, so
  // that nothing due afterwards runs). A run in progress finishes.
  void stopRunningDue() noexcept { run_due_stopped_.store(true, std::memory_order_release); }

  // How many times a settle request has posted to wake the thread (queued
  // ones do not): a count for tests.
  size_t drainPosts() const noexcept { return drain_posts_.load(std::memory_order_relaxed); }

 private:
  // Timer thread only. settle() is true when it queued the task for a
  // worker; a task claimed to run here goes to due_here_.
  bool settle(const TaskPtr& task);
  void place(const TaskPtr& task, TimeRep at);
  void remove(Task& task);
  void wakeUpAt(TimeRep at);
  void onWakeUp();
  // Runs the tasks settle() claimed for this thread (due_here_), and any
  // their runs claim. Timer thread only; every handler that settles ends
  // with it, so no claimed task waits for a later wake-up.
  void runDueHere();
  // Settles every queued request; true when that queued a task. Timer
  // thread only.
  bool drainQueued();
  // Any thread: makes the timer thread drain the queue soon. Coalesced.
  void postDrain();

  ReadyQueue& ready_;
  const RunDue run_due_;
  // Timer thread only: tasks claimed to run in this wake-up, and the batch
  // being run (swapped, so that a run may claim more).
  std::vector<TaskPtr> due_here_;
  std::vector<TaskPtr> running_here_;
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer wake_up_{io_};
  TimeRep wake_up_at_ = kNeverRep;  // when wake_up_ fires; kNeverRep: not armed
  DeadlineMap deadlines_;
  // wake_up_at_ as other threads see it: the thread drains queued_ no later
  // than this (kNeverRep: only when woken by a post).
  std::atomic<TimeRep> planned_{kNeverRep};
  base::Mutex queued_mu_;
  std::vector<TaskPtr> queued_ ABSL_GUARDED_BY(queued_mu_);
  std::atomic<size_t> queued_size_{0};  // queued_.size(), stored under queued_mu_
  std::vector<TaskPtr> draining_;       // timer thread only; swapped with queued_
  std::atomic<bool> drain_posted_{false};
  std::atomic<bool> run_due_stopped_{false};
  std::atomic<size_t> drain_posts_{0};
  std::thread thread_;
};

}  // namespace syncwrite::executor
