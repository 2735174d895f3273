// What the soak's threads count and the anomalies they find (issue 18).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <absl/base/thread_annotations.h>

#include "base/mutex.h"

namespace syncwrite::bench::soak {

// Counters, from any thread.
struct Tally {
  std::atomic<uint64_t> requests{0};  // sent
  std::atomic<uint64_t> answers{0};   // read
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> plain_writes{0};
  std::atomic<uint64_t> durable_writes{0};
  std::atomic<uint64_t> durable_committed{0};           // answered Success
  std::atomic<uint64_t> durable_ambiguous{0};           // answered SyncWriteAmbiguous
  std::atomic<uint64_t> durable_refused{0};             // any error that changes nothing
  std::atomic<uint64_t> dropped_unanswered{0};          // requests of dropped connections
  std::atomic<uint64_t> dropped_durable_unanswered{0};  // of which SyncWrites
  // Answers by status byte (the worker's reads and writes).
  std::array<std::atomic<uint64_t>, 256> statuses{};
};

// Anomalies: every one is counted; the first kKept are kept word for word.
class Anomalies {
 public:
  static constexpr size_t kKept = 50;
  void add(std::string what) {
    base::MutexLock lock(mutex_);
    ++count_;
    if (kept_.size() < kKept) kept_.push_back(std::move(what));
  }
  uint64_t count() const {
    base::MutexLock lock(mutex_);
    return count_;
  }
  std::vector<std::string> kept() const {
    base::MutexLock lock(mutex_);
    return kept_;
  }

 private:
  mutable base::Mutex mutex_;
  uint64_t count_ ABSL_GUARDED_BY(mutex_) = 0;
  std::vector<std::string> kept_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace syncwrite::bench::soak
