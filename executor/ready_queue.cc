#include "executor/ready_queue.h"

#include <thread>

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

}  // namespace

bool ReadyQueue::enqueueIfWaiting(const TaskPtr& task) {
  TaskRecord& rec = TaskAccess::record(*task);
  RecordState expected = RecordState::kWaiting;
  if (!rec.state.compare_exchange_strong(expected, RecordState::kQueued)) return false;
  // While queued or running the worker decides what happens next; a snooze in
  // the meantime must not post to the timer thread.
  rec.armed.store(0, std::memory_order_seq_cst);
  push(task);
  return true;
}

void ReadyQueue::push(TaskPtr task) {
  bool notify;
  {
    std::lock_guard lock(mu_);
    pushLocked(std::move(task));
    notify = sleepers_ > 0;
  }
  if (notify) cv_.notify_one();
}

ReadyQueue::TaskPtr ReadyQueue::pop() {
  for (;;) {
    std::unique_lock lock(mu_);
    if (stopped_) return nullptr;
    if (count_ == 0) {
      lock.unlock();
      if (spinUntilNonEmpty()) continue;
      lock.lock();
      ++sleepers_;
      cv_.wait(lock, [this] { return stopped_ || count_ != 0; });
      --sleepers_;
      if (stopped_) return nullptr;
    }
    return popLocked();
  }
}

bool ReadyQueue::spinUntilNonEmpty() const {
  const auto give_up = std::chrono::steady_clock::now() + kSpinFor;
  for (unsigned i = 1;; ++i) {
    if (size_.load(std::memory_order_acquire) != 0 || stopping_.load(std::memory_order_acquire)) {
      return true;
    }
    cpuRelax();
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= give_up) return false;
      // Another runnable thread (on an oversubscribed machine, perhaps the
      // one about to push) gets the core.
      std::this_thread::yield();
    }
  }
}

void ReadyQueue::stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    stopping_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void ReadyQueue::removeIf(const std::function<bool(const Task&)>& pred) {
  std::lock_guard lock(mu_);
  for (size_t n = count_; n > 0; --n) {
    TaskPtr task = popLocked();
    if (!pred(*task)) pushLocked(std::move(task));
  }
}

void ReadyQueue::pushLocked(TaskPtr task) {
  if (count_ == ring_.size()) {
    std::vector<TaskPtr> bigger(ring_.size() * 2);
    for (size_t i = 0; i < count_; ++i) {
      bigger[i] = std::move(ring_[(head_ + i) & (ring_.size() - 1)]);
    }
    ring_.swap(bigger);
    head_ = 0;
  }
  ring_[(head_ + count_) & (ring_.size() - 1)] = std::move(task);
  ++count_;
  size_.store(count_, std::memory_order_release);
}

ReadyQueue::TaskPtr ReadyQueue::popLocked() {
  TaskPtr task = std::move(ring_[head_]);
  head_ = (head_ + 1) & (ring_.size() - 1);
  --count_;
  size_.store(count_, std::memory_order_release);
  return task;
}

}  // namespace syncwrite::executor
