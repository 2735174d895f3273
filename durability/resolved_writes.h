// ResolvedWrites: SyncWrites resolved under a monitor's lock, whose
// completions are called after it is released.
//
// A monitor call that commits or aborts writes appends each write's
// completion and resolution here while it holds its lock; the caller calls
// notify() once every durability lock is released. This is how the layer
// keeps its promise that completions never run under one of its locks.
//
// notify() calls each completion exactly once, in the order the writes were
// resolved (seqno order within a vbucket). A completion that throws is
// reported on stderr and the others still run. The destructor notifies what
// is left, so a resolved write is never dropped — but callers notify
// explicitly, after their locks, rather than rely on destruction order.
//
// Holds up to kInPlace writes without allocating: one ack commits one write,
// or a short prefix when the replica acked several at once (with room for
// one, 0.025 allocations per durable write in the server came from here,
// when the simulated replica notified per ack). A caller that gathers many
// acks into one batch (the simulated replica, per turn of acks) keeps one
// batch and reuses it: notify() keeps its capacity. Not thread-safe; moved
// between threads as a whole.
#pragma once

#include <cstddef>
#include <utility>

#include <absl/container/inlined_vector.h>

#include "durability/sync_write.h"

namespace syncwrite::durability {

class ResolvedWrites {
 public:
  ResolvedWrites() = default;
  ResolvedWrites(ResolvedWrites&& other) noexcept : writes_(std::move(other.writes_)) {
    other.writes_.clear();
  }
  ResolvedWrites& operator=(ResolvedWrites&& other) noexcept {
    notify();
    writes_ = std::move(other.writes_);
    other.writes_.clear();
    return *this;
  }
  ~ResolvedWrites() {
    if (!writes_.empty()) notify();
  }

  void add(Completion&& completion, const Resolution& resolution) {
    writes_.push_back({std::move(completion), resolution});
  }
  // Room for n writes in all, so that a batch of known size (every write of
  // a bucket at shutdown) grows once rather than by doubling.
  void reserve(size_t n) { writes_.reserve(n); }
  bool empty() const noexcept { return writes_.empty(); }
  size_t size() const noexcept { return writes_.size(); }

  // Calls every completion once and empties the batch, keeping its capacity
  // for the next writes added (the destructor frees it).
  void notify() noexcept;

  // Frees the heap block of an empty batch that has room for more than
  // `max_writes`: a batch kept for reuse does not keep what one storm grew
  // it to (64 bytes a write). Does nothing to a batch holding writes.
  void shrinkIfAbove(size_t max_writes) noexcept {
    if (!writes_.empty() || writes_.capacity() <= max_writes) return;
    decltype(writes_) none;
    writes_.swap(none);
  }
  size_t capacity() const noexcept { return writes_.capacity(); }

 private:
  struct Entry {
    Completion completion;
    Resolution resolution;
  };
  static constexpr size_t kInPlace = 4;
  absl::InlinedVector<Entry, kInPlace> writes_;
};

}  // namespace syncwrite::durability
