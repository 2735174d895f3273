// CommitLatency: how long SyncWrites took from their acceptance to their
// commit, a histogram per durability level, for metrics.
//
// A SyncWrite's start is its prepare's CAS, read as nanoseconds of the
// real-time clock: syncwrite-server's CAS values are such stamps (a hybrid
// clock, server/dispatcher.h), as kv_engine's HLC CAS values are. The end is
// the real-time clock when the active monitor commits it. Only writes with a
// client are recorded (a promoted replica's prepares have no start here).
//
// The buckets' upper edges (kEdgesMicros) run from 100 µs to 60 s; a last,
// open bucket takes the rest (+Inf). Counts are kept in kShards copies; a
// thread records into the copy it was dealt the first time it recorded, so
// that threads committing at once rarely write one cache line (the cost of
// a record: a clock read by the caller, a search of 19 edges and two relaxed
// atomic adds). Any thread may record and read at once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "durability/level.h"

namespace syncwrite::durability {

class CommitLatency {
 public:
  static constexpr std::array<uint64_t, 19> kEdgesMicros = {
      100,    250,    500,     1000,    2500,    5000,     10000,    25000,    50000,   100000,
      250000, 500000, 1000000, 2500000, 5000000, 10000000, 20000000, 30000000, 60000000};
  static constexpr size_t kBuckets = kEdgesMicros.size() + 1;  // the last: over 60 s
  static constexpr size_t kShards = 8;

  struct Snapshot {
    std::array<uint64_t, kBuckets> counts{};  // not cumulative
    uint64_t sum_ns = 0;
    uint64_t count() const noexcept;
  };

  // A write of `level` (not kNone) that took `ns` nanoseconds (negative: 0).
  void record(Level level, int64_t ns) noexcept;
  Snapshot snapshot(Level level) const noexcept;

 private:
  struct alignas(64) Shard {
    std::array<std::array<std::atomic<uint64_t>, kBuckets>, kLevelCount> counts{};
    std::array<std::atomic<uint64_t>, kLevelCount> sum_ns{};
  };
  static size_t shardOfThisThread() noexcept;
  std::array<Shard, kShards> shards_{};
};

}  // namespace syncwrite::durability
