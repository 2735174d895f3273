// ReadyQueue (internal to executor/): the tasks that are due, in FIFO order,
// for the pool's worker threads.
//
// A worker that finds the queue empty spins for up to kSpinFor before it
// blocks on a condition variable. The spin is what makes schedule-and-run and
// wake-and-run cheap (no futex wake on either side while work keeps coming);
// it is bounded, so an idle pool costs nothing once the spin has expired.
// push() signals the condition variable only when a worker is asleep.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "executor/task.h"

namespace syncwrite::executor {

class ReadyQueue {
 public:
  using TaskPtr = std::shared_ptr<Task>;
  static constexpr std::chrono::microseconds kSpinFor{50};

  // Moves a waiting task to the queue: false when it is not kWaiting (it is
  // already queued, running or dead), which is how wakes coalesce.
  bool enqueueIfWaiting(const TaskPtr& task);

  // Queues a task its caller has already moved to kQueued.
  void push(TaskPtr task);

  // The next due task; blocks (after spinning) while there is none. Returns
  // nullptr once stop() has been called.
  TaskPtr pop();

  // Wakes every blocked pop(), which then returns nullptr; later pushes are
  // kept (and dropped with the queue).
  void stop();

  // Drops queued entries `pred` accepts (used to release dead tasks early).
  void removeIf(const std::function<bool(const Task&)>& pred);

 private:
  bool spinUntilNonEmpty() const;
  void pushLocked(TaskPtr task);
  TaskPtr popLocked();

  std::mutex mu_;
  std::condition_variable cv_;
  // A ring buffer rather than a deque: no allocation in the steady state, so
  // a worker never frees a block a scheduling thread allocated.
  std::vector<TaskPtr> ring_ = std::vector<TaskPtr>(64);  // guarded by mu_; size: power of 2
  size_t head_ = 0;                                       // guarded by mu_
  size_t count_ = 0;                                      // guarded by mu_
  int sleepers_ = 0;                                      // guarded by mu_
  bool stopped_ = false;                                  // guarded by mu_
  // Mirrors of count_ and stopped_ for spinning workers, which read
  // them without the lock.
  std::atomic<size_t> size_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace syncwrite::executor
