// TimerThread (internal to executor/): one thread running a boost::asio
// io_context that owns every task's timer (one steady_timer per task, created
// the first time the task needs one). It never runs a task: when a timer
// fires and the task is due, it moves the task to the ReadyQueue. Keeping
// timers off the worker threads means a long run() never delays another
// task's timer, and only this thread ever touches a steady_timer, so timers
// need no lock.
//
// Early arming. For a wake time W that changed since the timer was last armed,
// the timer is armed for now + (W - now) / kEarlyArmDivisor rather than for W
// (when it fires and W has not moved again, it is armed for W itself). A task
// whose wake time keeps being pushed around — the per-vbucket SyncWrite
// timeout, re-snoozed for each new head of its list with timeouts that vary
// per write — then takes snoozes to anything later than that early point as a
// plain atomic store. The price is one extra timer expiry per re-snoozed
// interval: a task whose wake time never changes still expires once at W.
//
// The record's `armed` atomic publishes the time the timer is set for; see
// task_record.h for the protocol that keeps it at or before the wake time.
#pragma once

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "executor/ready_queue.h"
#include "executor/task_record.h"

namespace syncwrite::executor {

class TimerThread {
 public:
  using RecordPtr = std::shared_ptr<TaskRecord>;
  static constexpr TimeRep kEarlyArmDivisor = 4;
  // Below this much sleep the timer is armed for the wake time itself.
  static constexpr std::chrono::nanoseconds kEarlyArmMin = std::chrono::milliseconds(10);

  // Starts the thread, named `name`.
  TimerThread(ReadyQueue& ready, const char* name);
  // stop(), then destroys the io_context: pending timers and posts are dropped
  // with the references they hold.
  ~TimerThread();

  // Stops the io_context and joins the thread; nothing is settled afterwards.
  void stop();

  // Asynchronous: the timer thread re-reads rec's wake time and arms, re-arms
  // or cancels its timer, or queues the task if it is due. Coalesced: while a
  // request for rec is pending, further ones cost one atomic exchange.
  void requestSettle(const RecordPtr& rec);

  // Synchronous form of requestSettle(): returns once the timer thread has
  // settled rec. Must not be called from the timer thread.
  void settleAndWait(RecordPtr rec);

  // Cancels the timers of recs (dead tasks) so that they drop their references;
  // with `wait`, returns once done.
  void release(std::vector<RecordPtr> recs, bool wait);

 private:
  // Timer thread only.
  void settle(const RecordPtr& rec);
  void arm(const RecordPtr& rec, TimeRep at);
  static void cancelTimer(TaskRecord& rec);

  ReadyQueue& ready_;
  boost::asio::io_context io_{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace syncwrite::executor
