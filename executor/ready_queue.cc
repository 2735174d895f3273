#include "executor/ready_queue.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <thread>
#include <utility>

#include "executor/futex.h"
#include "executor/task_access.h"

namespace syncwrite::executor {
namespace {

inline void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr size_t kMask = ReadyQueue::kRingSize - 1;
static_assert((ReadyQueue::kRingSize & kMask) == 0, "kRingSize must be a power of two");

}  // namespace

ReadyQueue::ReadyQueue() : cells_(kRingSize) {
  for (size_t i = 0; i < kRingSize; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
}

ReadyQueue::TaskPtr ReadyQueue::claimIfWaiting(Task& task) {
  TaskRecord& rec = TaskAccess::record(task);
  RecordState expected = RecordState::kWaiting;
  if (!rec.state.compare_exchange_strong(expected, RecordState::kQueued)) return nullptr;
  // While queued or running the runner decides what happens next; a snooze
  // in the meantime must not post to the timer thread.
  rec.armed.store(0, std::memory_order_seq_cst);
  return std::move(rec.self);  // the CAS made this thread its only mover
}

bool ReadyQueue::enqueueIfWaiting(Task& task) {
  TaskPtr claimed = claimIfWaiting(task);
  if (!claimed) return false;
  push(std::move(claimed));
  return true;
}

void ReadyQueue::push(TaskPtr task) {
  // Once the ring has overflowed, later pushes queue behind the overflow until
  // it drains, so that order stays FIFO.
  if (overflow_size_.load(std::memory_order_acquire) != 0 || !tryPushRing(task)) {
    base::MutexLock lock(overflow_mu_);
    overflow_.push_back(std::move(task));
    overflow_size_.store(overflow_.size(), std::memory_order_release);
  }
  notifySleeper();
}

// Vyukov's bounded MPMC queue: cell i is free for the push at position p when
// its seq is p, and holds the task of that push once seq is p + 1.
bool ReadyQueue::tryPushRing(TaskPtr& task) {
  size_t pos = tail_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & kMask];
    const size_t seq = cell.seq.load(std::memory_order_acquire);
    const auto dif = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
    if (dif == 0) {
      if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        cell.task = std::move(task);
        cell.seq.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (dif < 0) {
      return false;  // full
    } else {
      pos = tail_.load(std::memory_order_relaxed);
    }
  }
}

ReadyQueue::TaskPtr ReadyQueue::tryPopRing() {
  size_t pos = head_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & kMask];
    const size_t seq = cell.seq.load(std::memory_order_acquire);
    const auto dif = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
    if (dif == 0) {
      if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        TaskPtr task = std::move(cell.task);
        cell.seq.store(pos + kRingSize, std::memory_order_release);
        return task;
      }
    } else if (dif < 0) {
      return nullptr;  // empty
    } else {
      pos = head_.load(std::memory_order_relaxed);
    }
  }
}

ReadyQueue::TaskPtr ReadyQueue::tryPop() {
  if (TaskPtr task = tryPopRing()) return task;
  if (overflow_size_.load(std::memory_order_acquire) == 0) return nullptr;
  base::MutexLock lock(overflow_mu_);
  if (overflow_.empty()) return nullptr;
  TaskPtr task = std::move(overflow_.front());
  overflow_.pop_front();
  overflow_size_.store(overflow_.size(), std::memory_order_release);
  return task;
}

bool ReadyQueue::maybeNonEmpty() const {
  const size_t pos = head_.load(std::memory_order_relaxed);
  return cells_[pos & kMask].seq.load(std::memory_order_acquire) == pos + 1 ||
         overflow_size_.load(std::memory_order_relaxed) != 0 ||
         stopping_.load(std::memory_order_relaxed);
}

// The sleep/wake handshake. Each side makes one seq_cst read-modify-write on
// sleepers_ (no fence: ThreadSanitizer models RMWs, not fences):
//  - pop(), before it sleeps: sleepers_ += 1, then one more look at the queue;
//  - push(), after it queued: sleepers_ += 0, i.e. read the latest count.
// RMWs on one word are totally ordered, and each reads the value the previous
// one wrote. If the push's RMW comes first, the sleeper's RMW reads from it (or
// from a later RMW in its release sequence) and so synchronizes with it: the
// push happens-before the sleeper's last look, which finds the task. Otherwise
// the push's RMW reads a count that includes this sleeper (its decrement comes
// only after it wakes), so the push wakes a sleeper. Either way no task is left
// queued while every worker sleeps. A plain load would not do: it may read a
// stale count, which is why the version with loads needed two fences.
void ReadyQueue::notifySleeper() {
  if (sleepers_.fetch_add(0, std::memory_order_seq_cst) > 0) {
    epoch_.fetch_add(1, std::memory_order_release);
    futex::wake(epoch_, 1);
  }
}

ReadyQueue::TaskPtr ReadyQueue::pop(SpinBudget& budget) {
  for (;;) {
    if (stopping_.load(std::memory_order_acquire)) return nullptr;
    if (TaskPtr task = tryPop()) return task;
    if (spin(budget)) continue;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);  // see notifySleeper()
    // A push whose RMW read the count before our increment is visible from
    // here on. One that read it after bumps epoch_: if this load reads the
    // bump, it synchronizes with it and the look below finds the task; if not,
    // the wait returns at once (epoch_ moved) or is woken by the push.
    const uint32_t epoch = epoch_.load(std::memory_order_acquire);
    TaskPtr task;
    if (!stopping_.load(std::memory_order_acquire) && (task = tryPop()) == nullptr) {
      futex::wait(epoch_, epoch);
    }
    // Relaxed: a worker that goes round again makes a new seq_cst increment
    // before it sleeps again, and the argument above holds for that one.
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    if (task) return task;
  }
}

bool ReadyQueue::spin(SpinBudget& budget) const {
  const auto give_up = std::chrono::steady_clock::now() + budget.next;
  for (unsigned i = 1;; ++i) {
    if (maybeNonEmpty()) {
      budget.next = kMaxSpin;  // work is coming in bursts: keep spinning fully
      return true;
    }
    cpuRelax();
    if (i % 16 == 0) {
      if (std::chrono::steady_clock::now() >= give_up) {
        budget.next = std::max(budget.next / 2, kMinSpin);
        return false;
      }
      // Another runnable thread (on an oversubscribed machine, perhaps the
      // one about to push) gets the core.
      if (i % 64 == 0) std::this_thread::yield();
    }
  }
}

void ReadyQueue::stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  futex::wake(epoch_, INT_MAX);
}

void ReadyQueue::removeIf(const std::function<bool(const Task&)>& pred) {
  std::vector<TaskPtr> keep;
  // Dropped after the lock: dropping a task's last reference runs ~Task,
  // which takes a task table lock (the lock order is table, then queue).
  std::vector<TaskPtr> drop;
  {
    base::MutexLock lock(overflow_mu_);
    while (TaskPtr task = tryPopRing()) {
      (pred(*task) ? drop : keep).push_back(std::move(task));
    }
    for (TaskPtr& task : overflow_) {
      (pred(*task) ? drop : keep).push_back(std::move(task));
    }
    overflow_.clear();
    overflow_size_.store(0, std::memory_order_release);
  }
  for (TaskPtr& task : keep) push(std::move(task));
}

}  // namespace syncwrite::executor
