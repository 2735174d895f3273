#include "executor/timer_thread.h"

#include <pthread.h>

#include <future>

#include <boost/asio/post.hpp>

namespace syncwrite::executor {

TimerThread::TimerThread(ReadyQueue& ready, const char* name)
    : ready_(ready), work_(boost::asio::make_work_guard(io_)) {
  thread_ = std::thread([this, name] {
    pthread_setname_np(pthread_self(), name);
    io_.run();
  });
}

TimerThread::~TimerThread() {
  stop();
  for (auto& [at, task] : deadlines_) TaskAccess::record(*task).has_deadline = false;
  deadlines_.clear();
}

void TimerThread::stop() {
  if (!thread_.joinable()) return;
  work_.reset();
  io_.stop();
  thread_.join();
}

void TimerThread::requestSettle(const TaskPtr& task) {
  if (TaskAccess::record(*task).settle_pending.exchange(true, std::memory_order_seq_cst)) return;
  boost::asio::post(io_, [this, task] {
    // Cleared before settle() reads the wake time: a snooze that finds the
    // flag still set is seen by the read below (task_record.h).
    TaskAccess::record(*task).settle_pending.store(false, std::memory_order_seq_cst);
    settle(task);
  });
}

void TimerThread::settleAndWait(const TaskPtr& task) {
  std::promise<void> done;
  std::future<void> settled = done.get_future();
  boost::asio::post(io_, [this, &task, &done] {
    settle(task);
    done.set_value();
  });
  settled.wait();
}

void TimerThread::release(std::vector<TaskPtr> tasks, bool wait) {
  if (tasks.empty()) return;
  if (!wait) {
    boost::asio::post(io_, [this, tasks = std::move(tasks)] {
      for (const TaskPtr& task : tasks) remove(*task);
    });
    return;
  }
  std::promise<void> done;
  std::future<void> released = done.get_future();
  boost::asio::post(io_, [this, &tasks, &done] {
    for (const TaskPtr& task : tasks) remove(*task);
    done.set_value();
  });
  released.wait();
}

void TimerThread::settle(const TaskPtr& task) {
  TaskRecord& rec = TaskAccess::record(*task);
  std::atomic<TimeRep>& wake_time = TaskAccess::wakeTime(*task);
  for (;;) {
    const RecordState state = rec.state.load(std::memory_order_seq_cst);
    if (state == RecordState::kDead) {
      remove(*task);
      return;
    }
    // Queued or running: the worker settles the task after its run.
    if (state != RecordState::kWaiting) return;

    const TimeRep now = nowRep();
    const TimeRep wake = wake_time.load(std::memory_order_seq_cst);
    if (wake <= now) {
      if (ready_.enqueueIfWaiting(*task)) remove(*task);
      return;
    }
    TimeRep at;
    if (wake == kNeverRep) {
      at = kNeverRep;
    } else if (wake == rec.armed_for || wake - now < kEarlyArmMin.count()) {
      at = wake;
    } else {
      at = now + (wake - now) / kEarlyArmDivisor;
    }
    rec.armed.store(at, std::memory_order_seq_cst);
    // A snooze to before `at` that read the previous `armed` did not post:
    // pick its wake time up here.
    if (wake_time.load(std::memory_order_seq_cst) < at) continue;
    if (at == kNeverRep) {
      remove(*task);
    } else {
      rec.armed_for = wake;
      place(task, at);
    }
    return;
  }
}

void TimerThread::place(const TaskPtr& task, TimeRep at) {
  TaskRecord& rec = TaskAccess::record(*task);
  if (rec.has_deadline) deadlines_.erase(rec.deadline);
  rec.deadline = deadlines_.emplace(at, task);
  rec.has_deadline = true;
  rec.timer_pending.store(true);
  if (at < wake_up_at_) wakeUpAt(at);
}

void TimerThread::remove(Task& task) {
  TaskRecord& rec = TaskAccess::record(task);
  if (!rec.has_deadline) return;
  rec.has_deadline = false;
  rec.timer_pending.store(false);
  deadlines_.erase(rec.deadline);  // may drop the last reference to `task`
  // wake_up_ stays armed: when it fires it finds nothing due and re-arms.
}

void TimerThread::wakeUpAt(TimeRep at) {
  wake_up_at_ = at;
  wake_up_.expires_at(clock::TimePoint(clock::Duration(at)));
  wake_up_.async_wait([this](const boost::system::error_code& error) {
    if (error == boost::asio::error::operation_aborted) return;  // re-armed since
    onWakeUp();
  });
}

void TimerThread::onWakeUp() {
  wake_up_at_ = kNeverRep;
  const TimeRep now = nowRep();
  // settle() places entries only after `now`, so this loop ends.
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    TaskPtr task = std::move(deadlines_.begin()->second);
    TaskRecord& rec = TaskAccess::record(*task);
    rec.has_deadline = false;
    rec.timer_pending.store(false);
    deadlines_.erase(deadlines_.begin());
    settle(task);
  }
  if (!deadlines_.empty() && deadlines_.begin()->first < wake_up_at_) {
    wakeUpAt(deadlines_.begin()->first);
  }
}

}  // namespace syncwrite::executor
