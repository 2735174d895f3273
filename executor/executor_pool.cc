// ExecutorPool: the public calls, and the worker threads that run tasks.
//
// Pieces (each in its own file):
//  - TaskTable (task_table.h): id -> TaskRecord, sharded; every call by id
//    starts with one lookup under a shard lock.
//  - ReadyQueue (ready_queue.h): due tasks, FIFO, consumed by the NonIO
//    workers, which spin briefly before blocking.
//  - TimerThread (timer_thread.h): a boost::asio io_context on one thread, one
//    steady_timer per task that sleeps for a finite time.
//  - TaskRecord (task_record.h): per-task state machine and the timer protocol.
//
// Why the workers do not simply run the io_context: a task due now (schedule,
// wake) goes straight from the caller to the ready queue, where a spinning
// worker takes it without any system call; through asio it would pay for a
// handler allocation, the scheduler's lock and an eventfd or futex wake-up
// whenever the thread is blocked in epoll. And timers on a dedicated thread
// are never late behind a long-running task.
#include "executor/executor_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor/ready_queue.h"
#include "executor/task_access.h"
#include "executor/task_record.h"
#include "executor/task_table.h"
#include "executor/timer_thread.h"

namespace syncwrite::executor {
namespace {

using RecordPtr = std::shared_ptr<TaskRecord>;

// The record whose run() is executing on this thread, so that
// unregisterTaskable() called from inside a task does not wait for itself.
thread_local const TaskRecord* tl_running = nullptr;

bool ownedBy(const TaskRecord& rec, const Taskable& owner) {
  return &rec.task->taskable() == &owner;
}

}  // namespace

struct ExecutorPool::Impl {
  explicit Impl(size_t num_threads);
  ~Impl();

  void workerLoop(size_t index);
  void runOnce(const RecordPtr& rec);
  // After the wake time became `wake` (read or written at `now`): queue the
  // task if due, or have its timer re-armed if it is earlier than the timer.
  void afterWakeTimeSet(const RecordPtr& rec, TimeRep wake, TimeRep now);
  void markDead(TaskRecord& rec);
  void finish(const RecordPtr& rec);
  void runOver(TaskRecord& rec);

  bool wake(TaskId id);
  bool snooze(TaskId id, clock::Duration d);
  bool snoozeAndWait(TaskId id, clock::Duration d);

  std::atomic<TaskId> next_id{kNoTask + 1};
  ReadyQueue ready;
  TimerThread timers{ready, "NonIoTimer"};
  TaskTable table;

  // unregisterTaskable() waits here for runs to finish.
  std::mutex run_mu;
  std::condition_variable run_cv;
  std::atomic<int> run_waiters{0};

  std::vector<std::thread> workers;
};

ExecutorPool::Impl::Impl(size_t num_threads) {
  workers.reserve(num_threads);
  for (size_t i = 0; i < num_threads; ++i) workers.emplace_back([this, i] { workerLoop(i); });
}

ExecutorPool::Impl::~Impl() {
  ready.stop();
  for (std::thread& t : workers) t.join();
  timers.stop();
  // Drop the records while the io_context (inside `timers`) still exists:
  // a record owns its steady_timer. Records still referenced by pending timer
  // callbacks go with the io_context, as asio intends.
  ready.removeIf([](const TaskRecord&) { return true; });
  table.eraseIf([](const TaskRecord&) { return true; });
}

void ExecutorPool::Impl::workerLoop(size_t index) {
  const std::string name = "NonIoPool" + std::to_string(index);
  pthread_setname_np(pthread_self(), name.c_str());
  while (RecordPtr rec = ready.pop()) runOnce(rec);
}

void ExecutorPool::Impl::runOnce(const RecordPtr& rec) {
  // in_run rises before the claim, so that unregisterTaskable(), which marks
  // the task dead and then waits for in_run to fall, either stops the claim
  // or waits for the run.
  rec->in_run.store(true, std::memory_order_seq_cst);
  RecordState expected = RecordState::kQueued;
  if (!rec->state.compare_exchange_strong(expected, RecordState::kRunning)) {
    runOver(*rec);  // cancelled while queued
    return;
  }
  // Wakes from here on ask for another run after this one.
  rec->wake_requested.store(false, std::memory_order_seq_cst);
  Task& task = *rec->task;
  TaskAccess::setState(task, TaskState::kRunning);

  bool again = false;
  tl_running = rec.get();
  try {
    again = task.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "syncwrite executor: task '%s' (id %llu, owner '%s') threw: %s; it is dead\n",
                 task.description().c_str(), static_cast<unsigned long long>(rec->id),
                 task.taskable().name().c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr,
                 "syncwrite executor: task '%s' (id %llu, owner '%s') threw a non-exception; it is "
                 "dead\n",
                 task.description().c_str(), static_cast<unsigned long long>(rec->id),
                 task.taskable().name().c_str());
  }
  tl_running = nullptr;

  if (!again) {
    finish(rec);
    runOver(*rec);
    return;
  }
  TaskAccess::setState(task, TaskState::kSnoozed);
  expected = RecordState::kRunning;
  if (!rec->state.compare_exchange_strong(expected, RecordState::kWaiting)) {
    TaskAccess::setState(task, TaskState::kDead);  // cancelled during the run
    runOver(*rec);
    return;
  }
  runOver(*rec);
  // Waiting again, with no timer armed as far as anyone can tell: settle it
  // like a fresh snooze (task_record.h explains the ordering).
  rec->armed.store(kNeverRep, std::memory_order_seq_cst);
  const TimeRep now = nowRep();
  const TimeRep wake = rec->wakeTime().load(std::memory_order_seq_cst);
  if (rec->wake_requested.load(std::memory_order_seq_cst)) {
    ready.enqueueIfWaiting(rec);  // woken during the run
    return;
  }
  afterWakeTimeSet(rec, wake, now);
}

void ExecutorPool::Impl::afterWakeTimeSet(const RecordPtr& rec, TimeRep wake, TimeRep now) {
  if (wake <= now) {
    ready.enqueueIfWaiting(rec);
  } else if (wake < rec->armed.load(std::memory_order_seq_cst)) {
    timers.requestSettle(rec);
  }
  // Otherwise the timer fires no later than `wake` and re-arms: nothing to do.
}

void ExecutorPool::Impl::markDead(TaskRecord& rec) {
  rec.state.store(RecordState::kDead, std::memory_order_seq_cst);
  TaskAccess::setState(*rec.task, TaskState::kDead);
}

void ExecutorPool::Impl::finish(const RecordPtr& rec) {
  markDead(*rec);
  table.erase(rec->id);
  if (rec->timer_pending.load()) timers.release({rec}, /*wait=*/false);
}

void ExecutorPool::Impl::runOver(TaskRecord& rec) {
  rec.in_run.store(false, std::memory_order_seq_cst);
  if (run_waiters.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard lock(run_mu); }
    run_cv.notify_all();
  }
}

bool ExecutorPool::Impl::wake(TaskId id) {
  return table.withRecord(id, [this](const RecordPtr& rec) {
    rec->wakeTime().store(0, std::memory_order_seq_cst);
    rec->wake_requested.store(true, std::memory_order_seq_cst);
    ready.enqueueIfWaiting(rec);
  });
}

bool ExecutorPool::Impl::snooze(TaskId id, clock::Duration d) {
  const TimeRep now = nowRep();
  const TimeRep wake = deadlineAfter(now, d);
  return table.withRecord(id, [&](const RecordPtr& rec) {
    rec->wakeTime().store(wake, std::memory_order_seq_cst);
    afterWakeTimeSet(rec, wake, now);
  });
}

bool ExecutorPool::Impl::snoozeAndWait(TaskId id, clock::Duration d) {
  const TimeRep now = nowRep();
  const TimeRep wake = deadlineAfter(now, d);
  RecordPtr found;
  table.withRecord(id, [&](const RecordPtr& rec) {
    rec->wakeTime().store(wake, std::memory_order_seq_cst);
    found = rec;
  });
  if (!found) return false;
  if (wake <= now) {
    ready.enqueueIfWaiting(found);
  } else {
    timers.settleAndWait(found);
  }
  return true;
}

ExecutorPool::ExecutorPool(size_t num_nonio_threads)
    : impl_(std::make_unique<Impl>(std::max<size_t>(1, num_nonio_threads))) {}

ExecutorPool::~ExecutorPool() = default;

size_t ExecutorPool::threadsFor(size_t configured_nonio_threads) {
  if (configured_nonio_threads != 0) return configured_nonio_threads;
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

TaskId ExecutorPool::schedule(std::shared_ptr<Task> task) {
  if (!task) return kNoTask;
  const TaskId id = impl_->next_id.fetch_add(1, std::memory_order_relaxed);
  if (!TaskAccess::claimId(*task, id)) return kNoTask;  // scheduled before
  auto rec = std::make_shared<TaskRecord>(task, id);
  const Taskable& owner = task->taskable();
  if (!impl_->table.insert(rec, [&owner] { return owner.isShutdown(); })) {
    TaskAccess::releaseId(*task);
    return kNoTask;
  }
  TaskAccess::setState(*task, TaskState::kSnoozed);
  const TimeRep now = nowRep();
  impl_->afterWakeTimeSet(rec, rec->wakeTime().load(std::memory_order_seq_cst), now);
  return id;
}

void ExecutorPool::wake(TaskId id) { impl_->wake(id); }

void ExecutorPool::snooze(TaskId id, clock::Duration d) { impl_->snooze(id, d); }

bool ExecutorPool::wakeAndWait(TaskId id) { return impl_->wake(id); }

bool ExecutorPool::snoozeAndWait(TaskId id, clock::Duration d) {
  return impl_->snoozeAndWait(id, d);
}

bool ExecutorPool::cancel(TaskId id) {
  RecordPtr rec = impl_->table.erase(id);
  if (!rec) return false;
  impl_->markDead(*rec);
  if (rec->timer_pending.load()) impl_->timers.release({rec}, /*wait=*/false);
  return true;
}

void ExecutorPool::unregisterTaskable(Taskable& owner) {
  // Shut down first: a schedule() that checks after this is refused, and one
  // that checked before has inserted by the time eraseIf() takes its shard.
  owner.setShutdown();
  std::vector<RecordPtr> recs =
      impl_->table.eraseIf([&owner](const TaskRecord& rec) { return ownedBy(rec, owner); });
  for (const RecordPtr& rec : recs) impl_->markDead(*rec);
  impl_->ready.removeIf([&owner](const TaskRecord& rec) { return ownedBy(rec, owner); });
  impl_->timers.release(recs, /*wait=*/true);

  impl_->run_waiters.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock lock(impl_->run_mu);
    impl_->run_cv.wait(lock, [&recs] {
      return std::none_of(recs.begin(), recs.end(), [](const RecordPtr& rec) {
        return rec.get() != tl_running && rec->in_run.load(std::memory_order_seq_cst);
      });
    });
  }
  impl_->run_waiters.fetch_sub(1, std::memory_order_seq_cst);
}

size_t ExecutorPool::numThreads(TaskGroup group) const noexcept {
  switch (group) {
    case TaskGroup::kNonIO:
      return impl_->workers.size();
  }
  return 0;
}

}  // namespace syncwrite::executor
