#include "durability/timeout_lateness.h"

#include <algorithm>
#include <bit>
#include <chrono>

namespace syncwrite::durability {

void TimeoutLateness::record(clock::Duration late, uint64_t writes) noexcept {
  if (writes == 0) return;
  const int64_t ns = std::max<int64_t>(late.count(), 0);
  const uint64_t us = static_cast<uint64_t>(ns) / 1000;
  const size_t bucket = std::min<size_t>(std::bit_width(us), kBuckets - 1);
  counts_[bucket].fetch_add(writes, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(ns) * writes, std::memory_order_relaxed);
  int64_t seen = max_ns_.load(std::memory_order_relaxed);
  while (ns > seen && !max_ns_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

TimeoutLateness::Snapshot TimeoutLateness::snapshot() const noexcept {
  Snapshot out;
  for (size_t b = 0; b < kBuckets; ++b) out.counts[b] = counts_[b].load(std::memory_order_relaxed);
  out.sum_ns = sum_ns_.load(std::memory_order_relaxed);
  out.max_ns = max_ns_.load(std::memory_order_relaxed);
  return out;
}

uint64_t TimeoutLateness::Snapshot::count() const noexcept {
  uint64_t total = 0;
  for (const uint64_t c : counts) total += c;
  return total;
}

TimeoutLateness::Snapshot& TimeoutLateness::Snapshot::operator+=(const Snapshot& other) noexcept {
  for (size_t b = 0; b < kBuckets; ++b) counts[b] += other.counts[b];
  sum_ns += other.sum_ns;
  max_ns = std::max(max_ns, other.max_ns);
  return *this;
}

uint64_t TimeoutLateness::Snapshot::percentileMicros(double q) const noexcept {
  const uint64_t total = count();
  if (total == 0) return 0;
  // The rank of the quantile, 1-based, rounded up: q = 0.99 of 100 is the 99th.
  const auto rank = static_cast<uint64_t>(std::max(1.0, q * static_cast<double>(total) + 0.999999));
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += counts[b];
    if (seen >= rank) return std::min(upperEdgeMicros(b), maxMicros());
  }
  return maxMicros();
}

}  // namespace syncwrite::durability
