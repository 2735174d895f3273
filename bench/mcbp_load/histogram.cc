#include "bench/mcbp_load/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace syncwrite::bench::mcbp_load {

namespace {

// Buckets per power of two above the exact range; the exact range is
// [0, 2 * kSubBuckets).
constexpr unsigned kSubBucketBits = 8;
constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
// The largest value, 2^64 - 1, lands in bucket kSubBuckets * 55 + 511.
constexpr size_t kBuckets = kSubBuckets * (64 - kSubBucketBits - 1) + 2 * kSubBuckets;

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

// A value of bit width w > kSubBucketBits + 1 is shifted right by
// s = w - kSubBucketBits - 1, leaving a mantissa m in [kSubBuckets,
// 2 * kSubBuckets); its bucket is kSubBuckets * s + m, which continues the
// exact range without a gap.
size_t LatencyHistogram::bucketOf(uint64_t value) noexcept {
  if (value < 2 * kSubBuckets) return static_cast<size_t>(value);
  const unsigned shift = static_cast<unsigned>(std::bit_width(value)) - kSubBucketBits - 1;
  return static_cast<size_t>(kSubBuckets * shift + (value >> shift));
}

uint64_t LatencyHistogram::lowestIn(size_t bucket) noexcept {
  if (bucket < 2 * kSubBuckets) return bucket;
  const uint64_t shift = bucket / kSubBuckets - 1;
  const uint64_t mantissa = bucket - kSubBuckets * shift;
  return mantissa << shift;
}

uint64_t LatencyHistogram::highestIn(size_t bucket) noexcept {
  if (bucket < 2 * kSubBuckets) return bucket;
  const uint64_t shift = bucket / kSubBuckets - 1;
  return lowestIn(bucket) + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::record(uint64_t value) noexcept {
  ++counts_[bucketOf(value)];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::add(const LatencyHistogram& other) noexcept {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::percentile(double percentile) const noexcept {
  if (count_ == 0) return 0;
  percentile = std::clamp(percentile, 0.0, 100.0);
  // 99.9 has no exact binary value (the double is slightly above it): the
  // tolerance keeps 99.9% of 1000 at rank 999 instead of rounding up to 1000.
  const long double exact = static_cast<long double>(percentile) / 100 * count_;
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact - 1e-9L));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(highestIn(i), min_, max_);
  }
  return max_;
}

}  // namespace syncwrite::bench::mcbp_load
