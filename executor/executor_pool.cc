// ExecutorPool: the public calls, and the worker threads that run tasks.
//
// Pieces (each in its own file):
//  - TaskTable (task_table.h): id -> Task, indexed by the id, sharded; every
//    call by id starts with one lookup under a shard lock. It does not own
//    tasks: the pool's one reference to a scheduled task travels with it
//    (TaskRecord::self), and its entry leaves with the Task object.
//  - ReadyQueue (ready_queue.h): due tasks, FIFO, consumed by the NonIO
//    workers, which spin briefly before blocking.
//  - TimerThread (timer_thread.h): a boost::asio io_context on one thread, a
//    deadline map and one steady_timer for its earliest entry.
//  - TaskRecord (task_record.h): per-task state machine and the timer protocol,
//    a private member of Task (so schedule() allocates nothing).
//
// Why the workers do not simply run the io_context: a task due now (schedule,
// wake) goes straight from the caller to the ready queue, where a spinning
// worker takes it without any system call; through asio it would pay for a
// handler allocation, the scheduler's lock and an eventfd or futex wake-up
// whenever the thread is blocked in epoll. And timers on a dedicated thread
// are never late behind a long-running worker task (a DueRun::kTimerThread
// task's run does delay them, by its own length: executor_pool.h).
#include "executor/executor_pool.h"
#include "base/mutex.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "executor/ready_queue.h"
#include "executor/task_access.h"
#include "executor/task_table.h"
#include "executor/timer_thread.h"

namespace syncwrite::executor {
namespace {

using TaskPtr = std::shared_ptr<Task>;

// The record whose run() is executing on this thread, so that
// unregisterTaskable() called from inside a task does not wait for itself.
thread_local const Task* tl_running = nullptr;
// The index of the worker this thread is (SIZE_MAX on other threads).
thread_local size_t tl_worker = SIZE_MAX;

bool ownedBy(const Task& task, const Taskable& owner) { return &task.taskable() == &owner; }

TaskRecord& rec(Task& task) { return TaskAccess::record(task); }

}  // namespace

struct ExecutorPool::Impl {
  explicit Impl(size_t num_threads);
  ~Impl();

  void workerLoop(size_t index);
  void runOnce(TaskPtr task, size_t worker);
  // A due run claimed by the timer thread; runs in the slot after the
  // workers' in running_owner, which the timer thread takes as its own index
  // (so that unregisterTaskable() called from the run does not wait for it).
  void runOnTimerThread(TaskPtr task) {
    tl_worker = timer_slot;
    runOnce(std::move(task), timer_slot);
  }
  // After the wake time became `wake` (read or written at `now`): queue the
  // task if due, or have its timer re-armed if it is earlier than the timer.
  // `ref()` gives a reference for the timer thread (null: the task is dying).
  template <typename RefFn>
  void afterWakeTimeSet(Task& task, TimeRep wake, TimeRep now, RefFn&& ref);
  // Marks the task dead; false if it was dead already. When it was waiting,
  // the pool's reference (TaskRecord::self) is dropped here — never the last
  // one, since the caller holds `task`; queued or running, the queue or the
  // worker holds it and drops it.
  static bool retire(const TaskPtr& task);
  // retire(), and, if this call retired it, the timer thread told to drop
  // the task's deadline.
  bool finish(const TaskPtr& task);
  void runOver(Task& task, size_t worker);

  bool wake(TaskId id);
  bool snooze(TaskId id, clock::Duration d);
  void snoozeUntil(Task& task, TimeRep wake);
  bool snoozeAndWait(TaskId id, clock::Duration d);

  // The timer thread's entry in running_owner, after the workers'.
  const size_t timer_slot;
  std::atomic<TaskId> next_id{kNoTask + 1};
  ReadyQueue ready;
  TimerThread timers{ready, "NonIoTimer",
                     [this](TaskPtr task) { runOnTimerThread(std::move(task)); }};
  TaskTable table;

  // unregisterTaskable() waits here for runs to finish. It guards no member:
  // what is waited for is in atomics, and the lock only orders the waiter's
  // check against runOver()'s notify.
  base::Mutex run_mu;
  std::condition_variable run_cv;
  std::atomic<int> run_waiters{0};
  // The owner of the task each worker is running (or about to claim), null
  // when idle; the entry after the workers' is the timer thread's due runs. unregisterTaskable()
  // waits on these as well as on its tasks' in_run flags, because a task cancelled during its run
  // has left the table and would otherwise not be waited for. Compared, never dereferenced. One
  // line each: every run writes its worker's entry twice, and entries sharing a line would bounce
  // it between the cores running the workers.
  struct alignas(64) RunningOwner {
    std::atomic<const Taskable*> owner{nullptr};
  };
  std::unique_ptr<RunningOwner[]> running_owner;

  std::vector<std::thread> workers;
};

ExecutorPool::Impl::Impl(size_t num_threads) : timer_slot(num_threads) {
  workers.reserve(num_threads);
  // One entry per worker and one for the timer thread's due runs.
  running_owner = std::make_unique<RunningOwner[]>(num_threads + 1);
  for (size_t i = 0; i < num_threads; ++i) workers.emplace_back([this, i] { workerLoop(i); });
}

ExecutorPool::Impl::~Impl() {
  // First, so that no due run starts on the timer thread from here on: tasks
  // not yet run are dropped (executor_pool.h).
  timers.stopRunningDue();
  ready.stop();
  for (std::thread& t : workers) t.join();
  timers.stop();
  // Tasks still referenced by posts to the timer thread go with its
  // io_context; those with deadlines or queued settle requests go with its
  // deadline map and its queue. Unlinked first, their destructors do not
  // touch the table, which goes before them.
  ready.removeIf([](const Task&) { return true; });
  for (const TaskPtr& task : table.detachAll()) retire(task);
}

void ExecutorPool::Impl::workerLoop(size_t index) {
  const std::string name = "NonIoPool" + std::to_string(index);
  pthread_setname_np(pthread_self(), name.c_str());
  tl_worker = index;
  ReadyQueue::SpinBudget spin;
  while (TaskPtr task = ready.pop(spin)) runOnce(std::move(task), index);
}

// `task` is the pool's reference, from the ready queue.
void ExecutorPool::Impl::runOnce(TaskPtr task, size_t worker) {
  TaskRecord& r = rec(*task);
  // Published before the claim, cleared (in runOver) after the run: a run
  // that claimed before its task was marked dead is always seen.
  running_owner[worker].owner.store(&task->taskable(), std::memory_order_seq_cst);
  // in_run rises before the claim, so that unregisterTaskable(), which marks
  // the task dead and then waits for in_run to fall, either stops the claim
  // or waits for the run.
  r.in_run.store(true, std::memory_order_seq_cst);
  RecordState expected = RecordState::kQueued;
  if (!r.state.compare_exchange_strong(expected, RecordState::kRunning)) {
    runOver(*task, worker);  // cancelled while queued
    return;
  }
  // Wakes from here on ask for another run after this one.
  r.wake_requested.store(false, std::memory_order_seq_cst);
  TaskAccess::setState(*task, TaskState::kRunning);

  bool again = false;
  tl_running = task.get();
  try {
    again = task->run();
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "syncwrite executor: task '%s' (id %llu, owner '%s') threw: %s; it is dead\n",
                 task->description().c_str(), static_cast<unsigned long long>(task->id()),
                 task->taskable().name().c_str(), e.what());
  } catch (...) {
    std::fprintf(stderr,
                 "syncwrite executor: task '%s' (id %llu, owner '%s') threw a non-exception; it is "
                 "dead\n",
                 task->description().c_str(), static_cast<unsigned long long>(task->id()),
                 task->taskable().name().c_str());
  }
  tl_running = nullptr;

  if (!again) {
    // The pool's reference goes on return, in one decrement.
    finish(task);
    runOver(*task, worker);
    return;
  }
  TaskAccess::setState(*task, TaskState::kSnoozed);
  // Back with the task before it is kWaiting, when others may move it; this
  // worker keeps a reference of its own until it is done with the task.
  r.self = task;
  expected = RecordState::kRunning;
  if (!r.state.compare_exchange_strong(expected, RecordState::kWaiting)) {
    // Cancelled during the run: retire() left the reference to this worker.
    TaskAccess::setState(*task, TaskState::kDead);
    r.self.reset();
    runOver(*task, worker);
    return;
  }
  runOver(*task, worker);
  // Waiting again, with no deadline as far as anyone can tell: settle it like
  // a fresh snooze (task_record.h explains the ordering).
  r.armed.store(kNeverRep, std::memory_order_seq_cst);
  const TimeRep now = nowRep();
  const TimeRep wake = TaskAccess::wakeTime(*task).load(std::memory_order_seq_cst);
  if (r.wake_requested.load(std::memory_order_seq_cst)) {
    ready.enqueueIfWaiting(*task);  // woken during the run
    return;
  }
  afterWakeTimeSet(*task, wake, now, [&task]() -> const TaskPtr& { return task; });
}

template <typename RefFn>
void ExecutorPool::Impl::afterWakeTimeSet(Task& task, TimeRep wake, TimeRep now, RefFn&& ref) {
  if (wake <= now) {
    ready.enqueueIfWaiting(task);
  } else if (wake < rec(task).armed.load(std::memory_order_seq_cst)) {
    if (const TaskPtr& p = ref()) timers.requestSettle(p, wake, now);
  }
  // Otherwise the deadline comes no later than `wake` and re-arms: nothing to do.
}

bool ExecutorPool::Impl::retire(const TaskPtr& task) {
  TaskRecord& r = rec(*task);
  const RecordState was = r.state.exchange(RecordState::kDead, std::memory_order_seq_cst);
  if (was == RecordState::kDead) return false;
  TaskAccess::setState(*task, TaskState::kDead);
  if (was == RecordState::kWaiting) r.self.reset();  // the exchange made this its only mover
  return true;
}

bool ExecutorPool::Impl::finish(const TaskPtr& task) {
  if (!retire(task)) return false;
  // A deadline or a queued settle request holds a reference: drop it now.
  if (rec(*task).timer_pending.load() || rec(*task).settle_pending.load()) {
    timers.release({task}, /*wait=*/false);
  }
  return true;
}

void ExecutorPool::Impl::runOver(Task& task, size_t worker) {
  rec(task).in_run.store(false, std::memory_order_seq_cst);
  running_owner[worker].owner.store(nullptr, std::memory_order_seq_cst);
  if (run_waiters.load(std::memory_order_seq_cst) > 0) {
    { base::MutexLock lock(run_mu); }
    run_cv.notify_all();
  }
}

bool ExecutorPool::Impl::wake(TaskId id) {
  return table.withLiveTask(id, [this](TaskTable::Found& found) {
    Task& task = found.task();
    TaskAccess::wakeTime(task).store(0, std::memory_order_seq_cst);
    rec(task).wake_requested.store(true, std::memory_order_seq_cst);
    ready.enqueueIfWaiting(task);
  });
}

bool ExecutorPool::Impl::snooze(TaskId id, clock::Duration d) {
  const TimeRep now = nowRep();
  const TimeRep wake = deadlineAfter(now, d);
  return table.withLiveTask(id, [&](TaskTable::Found& found) {
    Task& task = found.task();
    TaskAccess::wakeTime(task).store(wake, std::memory_order_seq_cst);
    afterWakeTimeSet(task, wake, now, [&found]() -> const TaskPtr& { return found.ref(); });
  });
}

void ExecutorPool::Impl::snoozeUntil(Task& task, TimeRep wake) {
  TaskAccess::wakeTime(task).store(wake, std::memory_order_seq_cst);
  // The protocol of task_record.h: a wake time no earlier than `armed` is left
  // to the armed timer (or, while the task is queued or running and armed is
  // 0, to the worker), which re-arms — even when it is due already, since
  // the timer is then due too.
  if (wake >= rec(task).armed.load(std::memory_order_seq_cst)) return;
  // The lookup confirms that the task is scheduled here (and not dead), and
  // gives the reference the timer thread keeps.
  table.withLiveTask(task.id(), [&](TaskTable::Found& found) {
    if (&found.task() != &task) return;
    afterWakeTimeSet(task, wake, nowRep(), [&found]() -> const TaskPtr& { return found.ref(); });
  });
}

bool ExecutorPool::Impl::snoozeAndWait(TaskId id, clock::Duration d) {
  const TimeRep now = nowRep();
  const TimeRep wake = deadlineAfter(now, d);
  TaskPtr found;
  table.withLiveTask(id, [&](TaskTable::Found& live) {
    TaskAccess::wakeTime(live.task()).store(wake, std::memory_order_seq_cst);
    found = live.ref();
  });
  if (!found) return false;
  if (wake <= now) {
    ready.enqueueIfWaiting(*found);
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
  const Taskable& owner = task->taskable();
  rec(*task).self = task;  // published by the insert
  if (!impl_->table.insert(task, [&owner] { return owner.isShutdown(); })) {
    rec(*task).self.reset();
    TaskAccess::releaseId(*task);
    return kNoTask;
  }
  TaskAccess::setState(*task, TaskState::kSnoozed);
  const TimeRep wake = TaskAccess::wakeTime(*task).load(std::memory_order_seq_cst);
  // Due at once (the default wake time, 0) is known without reading the clock.
  impl_->afterWakeTimeSet(*task, wake, wake == 0 ? 0 : nowRep(),
                          [&task]() -> const TaskPtr& { return task; });
  return id;
}

void ExecutorPool::wake(TaskId id) { impl_->wake(id); }

void ExecutorPool::snooze(TaskId id, clock::Duration d) { impl_->snooze(id, d); }
void ExecutorPool::snooze(Task& task, clock::Duration d) {
  // A wake time of never is computed without reading the clock.
  impl_->snoozeUntil(task, d == clock::Duration::max() ? kNeverRep : deadlineAfter(nowRep(), d));
}
void ExecutorPool::snoozeUntil(Task& task, clock::TimePoint wake) {
  impl_->snoozeUntil(task, std::max<TimeRep>(0, wake.time_since_epoch().count()));
}

bool ExecutorPool::wakeAndWait(TaskId id) { return impl_->wake(id); }

bool ExecutorPool::snoozeAndWait(TaskId id, clock::Duration d) {
  return impl_->snoozeAndWait(id, d);
}

bool ExecutorPool::cancel(TaskId id) {
  TaskPtr task;
  impl_->table.withLiveTask(id, [&task](TaskTable::Found& found) { task = found.ref(); });
  if (!task) return false;
  return impl_->finish(task);  // false: it died meanwhile
}

void ExecutorPool::unregisterTaskable(Taskable& owner) {
  // Shut down first: a schedule() that checks after this is refused, and one
  // that checked before has inserted by the time collectLiveIf() takes its
  // shard.
  owner.setShutdown();
  std::vector<TaskPtr> tasks =
      impl_->table.collectLiveIf([&owner](const Task& task) { return ownedBy(task, owner); });
  for (const TaskPtr& task : tasks) Impl::retire(task);
  impl_->ready.removeIf([&owner](const Task& task) { return ownedBy(task, owner); });
  impl_->timers.release(tasks, /*wait=*/true);

  impl_->run_waiters.fetch_add(1, std::memory_order_seq_cst);
  {
    base::MutexLock lock(impl_->run_mu);
    lock.wait(impl_->run_cv, [&] {
      const bool task_running = std::any_of(tasks.begin(), tasks.end(), [](const TaskPtr& task) {
        return task.get() != tl_running && rec(*task).in_run.load(std::memory_order_seq_cst);
      });
      if (task_running) return false;
      // Also runs of the owner's tasks cancelled before this call.
      for (size_t i = 0; i <= impl_->workers.size(); ++i) {
        if (i != tl_worker &&
            impl_->running_owner[i].owner.load(std::memory_order_seq_cst) == &owner) {
          return false;
        }
      }
      return true;
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
