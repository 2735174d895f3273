// LatencyHistogram: a log-linear (HDR-style) histogram of non-negative
// integer values — mcbp_load records latencies in nanoseconds.
//
// Values below 512 have a bucket each (exact). Above, every power-of-two
// range [2^k, 2^(k+1)) is split into 256 equal buckets, so a bucket's width is
// at most 1/256 of its lowest value: a percentile is reported as its bucket's
// highest value, at most 0.4% above the true value and never below it (and
// never above the largest value recorded, which is kept exactly).
//
// Percentiles are nearest-rank: the p-th percentile of n values is the
// smallest recorded value (to bucket precision) with at least ceil(p/100 * n)
// values at or below it. With values under 512 it is exactly the textbook
// nearest-rank percentile.
//
// Fixed size (14,592 counters, 114 KiB), no allocation after construction:
// record() is an index computation and an increment. Not thread-safe: one
// histogram per connection thread, merged at the end with add().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace syncwrite::bench::mcbp_load {

class LatencyHistogram {
 public:
  LatencyHistogram();

  void record(uint64_t value) noexcept;
  // Adds every count of `other` to this one.
  void add(const LatencyHistogram& other) noexcept;

  uint64_t count() const noexcept { return count_; }
  uint64_t min() const noexcept { return count_ == 0 ? 0 : min_; }
  uint64_t max() const noexcept { return max_; }

  // The nearest-rank `percentile` (clamped to [0, 100]; 0 answers the
  // minimum), as described above; 0 when nothing was recorded. O(buckets).
  uint64_t percentile(double percentile) const noexcept;

  // The bucket of a value, and a bucket's lowest and highest values: the
  // layout described above, exposed for the unit test.
  static size_t bucketOf(uint64_t value) noexcept;
  static uint64_t lowestIn(size_t bucket) noexcept;
  static uint64_t highestIn(size_t bucket) noexcept;

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace syncwrite::bench::mcbp_load
