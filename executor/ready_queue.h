// ReadyQueue (internal to executor/): the tasks that are due, in FIFO order,
// for the pool's worker threads.
//
// The queue is a bounded lock-free ring (Vyukov's MPMC array queue) of
// kRingSize cells: a push is one compare-and-swap on the tail and a release
// store into the cell, a pop one compare-and-swap on the head. No mutex is on
// the schedule-to-run path, so handing a task to a spinning worker costs the
// few cache-line transfers of the cell and the counters (the mutex version
// paid for the lock line as well, on both sides: ~14% of a one-shot
// schedule-and-run). When the ring is full, pushes go to a mutex-guarded
// overflow list, and keep going there until it has drained, so order stays
// FIFO (up to pushes racing with the switch).
//
// A worker that finds the queue empty spins before it sleeps, so that
// schedule-and-run and wake-and-run cost no system call while work keeps
// coming. The spin adapts (SpinBudget): a spin that found work restores the
// full kMaxSpin; one that expired halves the next one, down to kMinSpin. A
// pool whose tasks come one at a time, far apart (polling timeouts, visitors),
// therefore pays kMinSpin per run instead of kMaxSpin, and an idle pool costs
// nothing. Sleeping is on a futex with an event count (futex.h: the system
// call alone); push() makes the wake-up call only when a worker is asleep.
// Whether one is asleep is settled by one seq_cst read-modify-write on
// sleepers_ on each side, no fences, so ThreadSanitizer checks the handshake
// (ready_queue.cc argues why no wake-up is lost).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "base/mutex.h"
#include "executor/task.h"

namespace syncwrite::executor {

class ReadyQueue {
 public:
  using TaskPtr = std::shared_ptr<Task>;
  static constexpr std::chrono::nanoseconds kMaxSpin = std::chrono::microseconds(50);
  static constexpr std::chrono::nanoseconds kMinSpin = std::chrono::microseconds(4);
  static constexpr size_t kRingSize = 1024;  // power of two

  // One worker's spin length, carried from one pop() to the next.
  struct SpinBudget {
    std::chrono::nanoseconds next = kMaxSpin;
  };

  ReadyQueue();

  // Moves a waiting task to the queue, with the pool's reference to it
  // (TaskRecord::self): false when it is not kWaiting (it is already queued,
  // running or dead), which is how wakes coalesce.
  bool enqueueIfWaiting(Task& task);

  // The same move out of kWaiting, to kQueued, without queueing: returns the
  // pool's reference for the caller to run the task itself (null when the
  // task is not kWaiting). The timer thread's due runs (timer_thread.h).
  static TaskPtr claimIfWaiting(Task& task);

  // Queues a task its caller has already moved to kQueued. Lock-free unless
  // the ring is full; a futex wake only when a worker sleeps.
  void push(TaskPtr task);

  // The next due task; blocks (after spinning for `budget`, which it adapts)
  // while there is none. Returns nullptr once stop() has been called.
  TaskPtr pop(SpinBudget& budget);

  // Wakes every blocked pop(), which then returns nullptr; later pushes are
  // kept (and dropped with the queue).
  void stop();

  // Drops queued entries `pred` accepts (used to release dead tasks early).
  // Entries it keeps are queued again, behind pushes made meanwhile.
  void removeIf(const std::function<bool(const Task&)>& pred);

 private:
  struct alignas(64) Cell {
    std::atomic<size_t> seq;
    TaskPtr task;
  };

  bool tryPushRing(TaskPtr& task);
  TaskPtr tryPopRing();
  TaskPtr tryPop();
  bool maybeNonEmpty() const;
  // Spins for up to `budget` until the queue looks non-empty; false when the
  // budget ran out.
  bool spin(SpinBudget& budget) const;
  // Wakes a sleeping worker if there is one.
  void notifySleeper();

  std::vector<Cell> cells_;
  alignas(64) std::atomic<size_t> tail_{0};  // next push position
  // Workers in (or entering) the futex wait. On tail_'s line: every push makes
  // a read-modify-write on it (notifySleeper), which needs the line exclusive,
  // and a pusher owns this line after its CAS on tail_ anyway; spinning
  // workers never read it, and a worker writes it only on its way to sleep.
  std::atomic<int> sleepers_{0};
  alignas(64) std::atomic<size_t> head_{0};  // next pop position
  alignas(64) std::atomic<size_t> overflow_size_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint32_t> epoch_{0};  // bumped to wake sleepers (event count)
  base::Mutex overflow_mu_;
  std::deque<TaskPtr> overflow_ ABSL_GUARDED_BY(overflow_mu_);
};

}  // namespace syncwrite::executor
