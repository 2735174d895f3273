#include "executor/ready_queue.h"

#include <thread>

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

bool ReadyQueue::enqueueIfWaiting(const RecordPtr& rec) {
  RecordState expected = RecordState::kWaiting;
  if (!rec->state.compare_exchange_strong(expected, RecordState::kQueued)) return false;
  // While queued or running the worker decides what happens next; a snooze in
  // the meantime must not post to the timer thread.
  rec->armed.store(0, std::memory_order_seq_cst);
  push(rec);
  return true;
}

void ReadyQueue::push(RecordPtr rec) {
  bool notify;
  {
    std::lock_guard lock(mu_);
    items_.push_back(std::move(rec));
    size_.store(items_.size(), std::memory_order_release);
    notify = sleepers_ > 0;
  }
  if (notify) cv_.notify_one();
}

ReadyQueue::RecordPtr ReadyQueue::pop() {
  for (;;) {
    std::unique_lock lock(mu_);
    if (stopped_) return nullptr;
    if (items_.empty()) {
      lock.unlock();
      if (spinUntilNonEmpty()) continue;
      lock.lock();
      ++sleepers_;
      cv_.wait(lock, [this] { return stopped_ || !items_.empty(); });
      --sleepers_;
      if (stopped_) return nullptr;
    }
    RecordPtr rec = std::move(items_.front());
    items_.pop_front();
    size_.store(items_.size(), std::memory_order_release);
    return rec;
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

void ReadyQueue::removeIf(const std::function<bool(const TaskRecord&)>& pred) {
  std::lock_guard lock(mu_);
  std::erase_if(items_, [&](const RecordPtr& rec) { return pred(*rec); });
  size_.store(items_.size(), std::memory_order_release);
}

}  // namespace syncwrite::executor
