// TimeoutLateness: how long after their deadlines timed-out SyncWrites were
// answered, as the timeout tasks see it.
//
// A timeout task resolves a vbucket's expired writes in one processTimeout()
// call and then runs their completions. It records, for that batch, the time
// after the completions ran minus the earliest deadline among them — an upper
// bound of every write's lateness in the batch — once per write. This is the
// server's own measure of "answered at the deadline": it starts at the
// deadline, which a client cannot see (the deadline runs from the server's
// receipt of the request), and ends when the answer is handed to the
// connection (sending it is the I/O threads' part).
//
// Log2 buckets of microseconds; percentile() returns the upper edge of the
// bucket the percentile falls in (at most 2x the true figure), capped at the
// exact maximum. Recording is a few relaxed atomic adds; any thread may
// record and read at once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "clock/time.h"

namespace syncwrite::durability {

class TimeoutLateness {
 public:
  // Bucket 0: under 1 µs; bucket i: [2^(i-1), 2^i) µs; the last one open.
  static constexpr size_t kBuckets = 40;
  // The upper edge of bucket `b` (< kBuckets - 1) in µs: 1 for bucket 0, else 2^b.
  static constexpr uint64_t upperEdgeMicros(size_t b) noexcept {
    return b == 0 ? 1 : uint64_t{1} << b;
  }

  // The counts at one moment (each bucket read on its own: a snapshot taken
  // while writes are recorded may be off by those writes). Snapshots of
  // several histograms add up (e.g. a bucket's two timeout modes).
  struct Snapshot {
    std::array<uint64_t, kBuckets> counts{};
    uint64_t sum_ns = 0;  // of every recorded lateness, each counted per write
    int64_t max_ns = 0;

    uint64_t count() const noexcept;
    uint64_t maxMicros() const noexcept { return static_cast<uint64_t>(max_ns) / 1000; }
    // The q-quantile (0 < q <= 1) in µs, an upper bound as above; 0 when empty.
    uint64_t percentileMicros(double q) const noexcept;
    Snapshot& operator+=(const Snapshot& other) noexcept;
  };

  // `writes` writes answered `late` after the earliest of their deadlines.
  void record(clock::Duration late, uint64_t writes) noexcept;
  Snapshot snapshot() const noexcept;

  uint64_t percentileMicros(double q) const noexcept { return snapshot().percentileMicros(q); }
  uint64_t maxMicros() const noexcept { return snapshot().maxMicros(); }
  uint64_t count() const noexcept { return snapshot().count(); }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<uint64_t> sum_ns_{0};
  std::atomic<int64_t> max_ns_{0};
};

}  // namespace syncwrite::durability
