// TimerThread (internal to executor/): one thread running a boost::asio
// io_context that decides when sleeping tasks are due. It never runs a task:
// when a task is due it moves it to the ReadyQueue. Keeping timers off the
// worker threads means a long run() never delays another task's timer.
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
#pragma once

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

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

  // Starts the thread, named `name`.
  TimerThread(ReadyQueue& ready, const char* name);
  // stop(), then drops every deadline (and the references they hold).
  ~TimerThread();

  // Stops the io_context and joins the thread; nothing is settled afterwards.
  void stop();

  // Asynchronous: the timer thread re-reads the task's wake time and places,
  // moves or removes its deadline, or queues the task if it is due. Coalesced:
  // while a request for the task is pending, further ones cost one exchange.
  void requestSettle(const TaskPtr& task);

  // Synchronous form of requestSettle(): returns once the timer thread has
  // settled the task. Must not be called from the timer thread.
  void settleAndWait(const TaskPtr& task);

  // Removes the deadlines of `tasks` (dead tasks), dropping their references;
  // with `wait`, returns once done.
  void release(std::vector<TaskPtr> tasks, bool wait);

 private:
  // Timer thread only.
  void settle(const TaskPtr& task);
  void place(const TaskPtr& task, TimeRep at);
  void remove(Task& task);
  void wakeUpAt(TimeRep at);
  void onWakeUp();

  ReadyQueue& ready_;
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer wake_up_{io_};
  TimeRep wake_up_at_ = kNeverRep;  // when wake_up_ fires; kNeverRep: not armed
  DeadlineMap deadlines_;
  std::thread thread_;
};

}  // namespace syncwrite::executor
