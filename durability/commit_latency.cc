#include "durability/commit_latency.h"

#include <algorithm>

namespace syncwrite::durability {

size_t CommitLatency::shardOfThisThread() noexcept {
  static std::atomic<size_t> next{0};
  thread_local const size_t shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

void CommitLatency::record(Level level, int64_t ns) noexcept {
  const auto l = static_cast<size_t>(level);
  if (l == 0 || l >= kLevelCount) return;
  const uint64_t took = ns < 0 ? 0 : static_cast<uint64_t>(ns);
  const uint64_t micros = took / 1000;
  // The first edge at or above it; past the last, the open bucket.
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(kEdgesMicros.begin(), kEdgesMicros.end(), micros) - kEdgesMicros.begin());
  Shard& shard = shards_[shardOfThisThread()];
  shard.counts[l][bucket].fetch_add(1, std::memory_order_relaxed);
  shard.sum_ns[l].fetch_add(took, std::memory_order_relaxed);
}

CommitLatency::Snapshot CommitLatency::snapshot(Level level) const noexcept {
  Snapshot out;
  const auto l = static_cast<size_t>(level);
  if (l >= kLevelCount) return out;
  for (const Shard& shard : shards_) {
    for (size_t b = 0; b < kBuckets; ++b) {
      out.counts[b] += shard.counts[l][b].load(std::memory_order_relaxed);
    }
    out.sum_ns += shard.sum_ns[l].load(std::memory_order_relaxed);
  }
  return out;
}

uint64_t CommitLatency::Snapshot::count() const noexcept {
  uint64_t total = 0;
  for (const uint64_t c : counts) total += c;
  return total;
}

}  // namespace syncwrite::durability
