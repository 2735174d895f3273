// Fifo<T>: a first-in, first-out queue that reuses its storage.
//
// A std::deque used as a queue allocates a block whenever its back enters a
// new one and frees one whenever its front leaves one: steady traffic through
// it costs an allocation per 512 / sizeof(T) elements, for ever. perf's malloc
// probe counted 0.14 allocations per durable write from two such queues in
// the server (the simulated replica's acks, a connection's answer slots;
// docs/benchmarks.md as of d3081a1).
//
// A Fifo is a ring (boost::circular_buffer) that doubles when full and
// otherwise reuses the room it has, so steady traffic allocates nothing. Once
// emptied while it has room for more than kKeep elements, it frees it: an
// idle queue does not hold on to a burst's peak. The price is the slack of
// doubling while it holds many: up to half its room unused, where a deque
// wastes at most a block. So the monitor's tracked writes stay in a deque
// (active_durability_monitor.h): with 300k writes pending, 293 a vbucket, a
// ring of 512 would add ~34 bytes per pending write. A connection's answer
// slots went back to a deque with spare blocks (base/spare_block.h) on
// 2026-11-28: the rings a storm's connections outgrew stayed in tcmalloc's
// free lists, ~9 bytes per pending write.
//
// Not thread-safe. Iterators are random-access, front to back; pushing or
// popping invalidates them, as in a std::deque.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include <boost/circular_buffer.hpp>

namespace syncwrite::base {

template <typename T, size_t kKeep = 16>
class Fifo {
  using Ring = boost::circular_buffer<T>;

 public:
  using value_type = T;
  using iterator = typename Ring::iterator;
  using const_iterator = typename Ring::const_iterator;

  // The room a Fifo takes at its first push.
  static constexpr size_t kFirstCapacity = 4;

  Fifo() = default;
  Fifo(Fifo&&) noexcept = default;
  Fifo& operator=(Fifo&&) noexcept = default;
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;

  // Appends T(args...) and returns it.
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (ring_.full()) ring_.set_capacity(std::max(kFirstCapacity, 2 * ring_.capacity()));
    ring_.push_back(T(std::forward<Args>(args)...));
    return ring_.back();
  }
  void push_back(T&& value) { emplace_back(std::move(value)); }
  void push_back(const T& value) { emplace_back(value); }

  // Removes the front element. Not on an empty Fifo.
  void pop_front() {
    ring_.pop_front();
    if (ring_.empty()) releaseIfLarge();
  }
  void clear() {
    ring_.clear();
    releaseIfLarge();
  }

  T& front() { return ring_.front(); }
  const T& front() const { return ring_.front(); }
  T& back() { return ring_.back(); }
  const T& back() const { return ring_.back(); }
  T& operator[](size_t i) { return ring_[i]; }
  const T& operator[](size_t i) const { return ring_[i]; }

  bool empty() const noexcept { return ring_.empty(); }
  size_t size() const noexcept { return ring_.size(); }
  // Elements it holds room for without allocating.
  size_t capacity() const noexcept { return ring_.capacity(); }

  iterator begin() noexcept { return ring_.begin(); }
  iterator end() noexcept { return ring_.end(); }
  const_iterator begin() const noexcept { return ring_.begin(); }
  const_iterator end() const noexcept { return ring_.end(); }

 private:
  void releaseIfLarge() {
    if (ring_.capacity() > kKeep) Ring().swap(ring_);
  }

  Ring ring_;
};

}  // namespace syncwrite::base
