#include "executor/timer_thread.h"

#include <pthread.h>

#include <future>

#include <boost/asio/post.hpp>

namespace syncwrite::executor {

namespace {
constexpr TimeRep kSlackRep = TimerThread::kSlack.count();
// The TimerThread whose thread this is (null on every other thread).
thread_local const TimerThread* tl_timer_thread = nullptr;
}  // namespace

bool TimerThread::onThisThread() const noexcept { return tl_timer_thread == this; }

TimerThread::TimerThread(ReadyQueue& ready, const char* name, RunDue run_due)
    : ready_(ready), run_due_(std::move(run_due)), work_(boost::asio::make_work_guard(io_)) {
  // Room for the usual few requests between two drains, so that queueing one
  // allocates nothing; the two swap, so both need it.
  {
    base::MutexLock lock(queued_mu_);
    queued_.reserve(kQueuedReserve);
  }
  draining_.reserve(kQueuedReserve);
  due_here_.reserve(kQueuedReserve);
  running_here_.reserve(kQueuedReserve);
  thread_ = std::thread([this, name] {
    pthread_setname_np(pthread_self(), name);
    tl_timer_thread = this;
    io_.run();
  });
}

TimerThread::~TimerThread() {
  stop();
  {
    base::MutexLock lock(queued_mu_);
    queued_.clear();
  }
  due_here_.clear();
  for (auto& [at, task] : deadlines_) TaskAccess::record(*task).has_deadline = false;
  deadlines_.clear();
}

void TimerThread::stop() {
  if (!thread_.joinable()) return;
  work_.reset();
  io_.stop();
  thread_.join();
}

TimeRep TimerThread::slotOf(TimeRep at, TimeRep now) noexcept {
  if (at - now < kExactBelow.count() || at > kNeverRep - kSlackRep) return at;
  return (at + kSlackRep - 1) / kSlackRep * kSlackRep;
}

void TimerThread::requestSettle(const TaskPtr& task, TimeRep wake, TimeRep now) {
  if (!TaskAccess::record(*task).settle_pending.exchange(true, std::memory_order_seq_cst)) {
    base::MutexLock lock(queued_mu_);
    queued_.push_back(task);
    queued_size_.store(queued_.size(), std::memory_order_seq_cst);
  }
  // A request already pending is drained at the thread's planned wake-up
  // too; it needs a post only if the task is due to fire before that, or if
  // that wake-up is far off (the header says why).
  const TimeRep planned = planned_.load(std::memory_order_seq_cst);
  if (slotOf(wake, now) < planned || planned - now > kQueueWithin.count()) postDrain();
}

void TimerThread::postDrain() {
  // Posted and not yet started: it will drain what is queued now (its
  // handler clears the flag before it takes the queue). The load spares
  // the line a write per call while a post is on its way.
  if (drain_posted_.load(std::memory_order_seq_cst)) return;
  if (drain_posted_.exchange(true, std::memory_order_seq_cst)) return;
  drain_posts_.fetch_add(1, std::memory_order_relaxed);
  boost::asio::post(io_, [this] {
    drain_posted_.store(false, std::memory_order_seq_cst);
    drainQueued();
    runDueHere();
  });
}

bool TimerThread::drainQueued() {
  {
    base::MutexLock lock(queued_mu_);
    draining_.swap(queued_);
    queued_size_.store(0, std::memory_order_seq_cst);
  }
  bool queued = false;
  for (const TaskPtr& task : draining_) {
    // Cleared before settle() reads the wake time: a snooze that finds the
    // flag still set is seen by that read (task_record.h).
    TaskAccess::record(*task).settle_pending.store(false, std::memory_order_seq_cst);
    queued |= settle(task);
  }
  draining_.clear();  // keeps its capacity for the next swap
  return queued;
}

void TimerThread::runDueHere() {
  // A run that settles synchronously (settleAndWait) may claim more: hence
  // the swap, and the loop.
  while (!due_here_.empty()) {
    running_here_.swap(due_here_);
    for (TaskPtr& task : running_here_) run_due_(std::move(task));
    running_here_.clear();  // keeps its capacity for the next swap
  }
}

void TimerThread::settleAndWait(const TaskPtr& task) {
  if (onThisThread()) {  // from a due run here: a post would wait for itself
    drainQueued();
    settle(task);
    return;
  }
  std::promise<void> done;
  std::future<void> settled = done.get_future();
  boost::asio::post(io_, [this, &task, &done] {
    drainQueued();  // every request made before this one is settled too
    settle(task);
    done.set_value();
    runDueHere();
  });
  settled.wait();
}

void TimerThread::release(std::vector<TaskPtr> tasks, bool wait) {
  if (tasks.empty()) return;
  if (wait && onThisThread()) {  // from a due run here: a post would wait for itself
    drainQueued();
    for (const TaskPtr& task : tasks) remove(*task);
    return;
  }
  if (!wait) {
    boost::asio::post(io_, [this, tasks = std::move(tasks)] {
      drainQueued();  // drops the queued references of dead tasks
      for (const TaskPtr& task : tasks) remove(*task);
      runDueHere();
    });
    return;
  }
  std::promise<void> done;
  std::future<void> released = done.get_future();
  boost::asio::post(io_, [this, &tasks, &done] {
    drainQueued();
    for (const TaskPtr& task : tasks) remove(*task);
    done.set_value();
    runDueHere();
  });
  released.wait();
}

bool TimerThread::settle(const TaskPtr& task) {
  TaskRecord& rec = TaskAccess::record(*task);
  std::atomic<TimeRep>& wake_time = TaskAccess::wakeTime(*task);
  for (;;) {
    const RecordState state = rec.state.load(std::memory_order_seq_cst);
    if (state == RecordState::kDead) {
      remove(*task);
      return false;
    }
    // Queued or running: the worker settles the task after its run.
    if (state != RecordState::kWaiting) return false;

    const TimeRep now = nowRep();
    const TimeRep wake = wake_time.load(std::memory_order_seq_cst);
    if (wake <= now) {
      if (task->dueRun() == DueRun::kTimerThread &&
          !run_due_stopped_.load(std::memory_order_acquire)) {
        TaskPtr claimed = ReadyQueue::claimIfWaiting(*task);
        if (!claimed) return false;
        remove(*task);
        due_here_.push_back(std::move(claimed));
        return false;
      }
      if (!ready_.enqueueIfWaiting(*task)) return false;
      remove(*task);
      return true;
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
      // `armed` stays `at`, at or before the wake time (task_record.h); the
      // entry may be up to kSlack later.
      place(task, slotOf(at, now));
    }
    return false;
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
  planned_.store(at, std::memory_order_seq_cst);  // earlier: no request can be missed
  wake_up_.expires_at(clock::TimePoint(clock::Duration(at)));
  wake_up_.async_wait([this](const boost::system::error_code& error) {
    if (error == boost::asio::error::operation_aborted) return;  // re-armed since
    onWakeUp();
  });
}

void TimerThread::onWakeUp() {
  // planned_ keeps the time that fired, which is past: requests queued until
  // the later one is published below ask for no post, and are drained here.
  wake_up_at_ = kNeverRep;
  bool queued = false;
  do {
    queued |= drainQueued();
    const TimeRep now = nowRep();
    // settle() places entries only after `now`, so this loop ends.
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      TaskPtr task = std::move(deadlines_.begin()->second);
      TaskRecord& rec = TaskAccess::record(*task);
      rec.has_deadline = false;
      rec.timer_pending.store(false);
      deadlines_.erase(deadlines_.begin());
      queued |= settle(task);
    }
    // Their re-arms queue settle requests, which the loop drains before it
    // sleeps.
    runDueHere();
    TimeRep next = deadlines_.empty() ? kNeverRep : deadlines_.begin()->first;
    // The tick (header): what was queued now is likely to re-arm within a
    // slot or two; those requests wait for this wake-up instead of posting.
    if (queued) next = std::min(next, now / kSlackRep * kSlackRep + 2 * kSlackRep);
    if (next < wake_up_at_) {
      wakeUpAt(next);
    } else if (wake_up_at_ == kNeverRep) {
      planned_.store(kNeverRep, std::memory_order_seq_cst);
    }
    // Published (by wakeUpAt or above) before this read: a request queued
    // after the read saw the new planned_ (the header's Dekker argument).
  } while (queued_size_.load(std::memory_order_seq_cst) != 0);
}

}  // namespace syncwrite::executor
