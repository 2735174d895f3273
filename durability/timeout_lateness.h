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

  // `writes` writes answered `late` after the earliest of their deadlines.
  void record(clock::Duration late, uint64_t writes) noexcept;

  // The q-quantile (0 < q <= 1) in microseconds, an upper bound as above; 0
  // when nothing was recorded.
  uint64_t percentileMicros(double q) const noexcept;
  uint64_t maxMicros() const noexcept;
  uint64_t count() const noexcept;

 private:
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<int64_t> max_ns_{0};
};

}  // namespace syncwrite::durability
