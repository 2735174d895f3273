// TimerThread (internal to executor/): one thread running a boost::asio
// io_context that decides when sleeping tasks are due. When a task is due it
// moves it to the ReadyQueue, for a worker; keeping timers off the worker
// threads means a long run() never delays another task's timer. The
// exception is a task that asked for its due runs here
// (DueRun::kTimerThread, executor_pool.h): the thread claims it (kWaiting to
// kQueued, as a queue would) and, once the wake-up's expired entries are
// settled, runs it through the pool's run protocol (the RunDue callback),
// saving the worker's wake-up. Its re-arm queues a settle request like any
// other: in onWakeUp() drained before the thread sleeps, in a drain handler
// posted or left for the planned wake-up, as any request is.
//
// Timers: a deadline map (time -> task, each task knowing its own entry) and
// one asio steady_timer armed for the earliest entry — the shape of asio's own
// timer queue, but with no asio object inside a Task, so a Task may outlive
// the pool, and re-arming a task is a map erase + insert on this thread.
//
// Early arming. For a wake time W that changed since the task was last armed,
// its entry is placed at now + (W - now) / kEarlyArmDivisor rather than at W
// (when that passes and W has not moved again, the entry is placed at W
// itself). A task whose wake time keeps being pushed around — the per-vbucket
// SyncWrite timeout, re-snoozed for each new head of its list with timeouts
// that vary per write — then takes snoozes to anything later than that early
// point as a plain atomic store. The price is one extra expiry per re-snoozed
// interval: a task whose wake time never changes still expires once at W.
//
// The record's `armed` atomic publishes the time the task's entry is at; see
// task_record.h for the protocol that keeps it at or before the wake time.
//
// Timer slack. An entry for a sleep of kExactBelow or more is placed at its time
// rounded UP to a multiple of kSlack (on the steady clock's epoch), like
// Linux's timer slack: periodic tasks whose times fall in one slot — the
// flusher's tick and the event-driven timeout timer, whose own slack is a
// multiple of it — expire together, in one wake-up of this thread. A task is
// never queued before its wake time; a timed one up to kSlack after it.
// Shorter sleeps are placed exactly.
//
// Settling without waking the thread. A settle request whose slot is no
// earlier than the thread's next planned wake-up (`planned_`, the time its
// asio timer is armed for), when that wake-up is at most kQueueWithin away,
// is only queued: the thread settles the queue when it wakes, which is no
// later than that slot. An earlier slot, or a wake-up further off, posts. (A
// task queued for long stays unsettled: its `armed` is not yet set, so each
// further snooze to an earlier time takes the pool's id lookup and comes
// here; queueing only for a near wake-up bounds that to a few slots.)
//
// The tick. After a wake-up that queued tasks, the thread plans one more at
// the start of the slot after next. A task queued now that re-arms itself for
// a slot or more after its run (the flusher's 1 ms pace while a SyncWrite
// awaits persistence, the event-driven timeout timer's next slot, the
// polling task's interval) then finds a
// wake-up planned no later than its slot, and its re-arm costs no post. A
// task whose period ends by the tick costs this thread one wake-up per period
// (the tick drains its re-arm and finds it due) rather than a post and an
// expiry; a longer period (the flusher's 10 ms pace under plain writes)
// still costs two (the tick, then the expiry). A tick
// that finds nothing costs one wake-up and plans no further tick; an idle
// pool plans none.
//
// The race between "a client queues a request for W, then reads planned_"
// and "the thread publishes a later planned_ after a wake-up, then reads the
// queue's length" is closed Dekker-style (both sequentially consistent): one
// of them sees the other's store, so either the client posts or the thread
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
