// Helpers for the durability tests: a recorder of resolutions that a test
// can wait on, and a few topologies.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "durability/sync_write.h"
#include "durability/topology.h"
#include "vbucket/checkpoint_manager.h"

namespace syncwrite::durability::testing {

// Records every resolution; completion() hands out completions that record
// into it. Waiting is for events, with a hang guard — never for time to pass.
class Recorder {
 public:
  Completion completion(const std::string& tag = "") {
    return [this, tag](const Resolution& r) {
      std::lock_guard lock(mutex_);
      entries_.push_back({tag, r, std::this_thread::get_id()});
      cv_.notify_all();
    };
  }
  struct Entry {
    std::string tag;
    Resolution resolution;
    std::thread::id thread;
  };
  std::vector<Entry> entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }
  // True once at least `n` resolutions arrived (false after the hang guard).
  bool waitFor(size_t n, std::chrono::seconds guard = std::chrono::seconds(30)) const {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, guard, [&] { return entries_.size() >= n; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::vector<Entry> entries_;
};

// Waits (with a hang guard) until `done()` holds, re-checking every
// millisecond. For counters the code under test raises on other threads.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::seconds guard = std::chrono::seconds(30)) {
  const auto give_up = std::chrono::steady_clock::now() + guard;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A coarse view of a manual clock, as CLOCK_MONOTONIC_COARSE is of
// CLOCK_MONOTONIC: readings step by `resolution` and lag the manual clock
// (real time, in a test) by less than one step; never ahead of it.
class CoarseView {
 public:
  CoarseView(const clock::ManualClock& real, clock::Duration resolution)
      : real_(real), resolution_(resolution) {}
  clock::TimePoint now() const noexcept {
    const clock::Duration t = real_.now().time_since_epoch();
    return clock::TimePoint(t - t % resolution_);
  }

 private:
  const clock::ManualClock& real_;
  const clock::Duration resolution_;
};

inline ReplicationTopology chainOf(std::vector<std::string> replicas) {
  return ReplicationTopology::create({ReplicationChain{"active", std::move(replicas)}}).value();
}

// The op and seqno of every item queued in `cm`, via a fresh cursor (so call
// it before anything is expelled).
inline std::vector<std::pair<vbucket::QueueOp, std::string>> queuedOps(
    vbucket::CheckpointManager& cm) {
  const std::string cursor = "test-reader";
  cm.removeCursor(cursor);
  cm.registerCursor(cursor);
  std::vector<std::pair<vbucket::QueueOp, std::string>> ops;
  for (const vbucket::LogRecord& record : cm.readItems(cursor))
    ops.emplace_back(record.op, record.item->key());
  cm.removeCursor(cursor);
  return ops;
}

}  // namespace syncwrite::durability::testing
