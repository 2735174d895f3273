#include "vbucket/bucket_memory.h"

#include <algorithm>

namespace syncwrite::vbucket {

namespace {
// `percent` of `bytes`, saturating at INT64_MAX.
int64_t share(uint64_t bytes, uint64_t percent) noexcept {
  const uint64_t capped = std::min<uint64_t>(bytes, INT64_MAX / 100);
  return static_cast<int64_t>(capped * std::min<uint64_t>(percent, 100) / 100);
}
}  // namespace

void BucketMemory::setLimits(uint64_t quota, uint64_t checkpoint_percent, uint64_t upper_percent,
                             uint64_t lower_percent) noexcept {
  const int64_t checkpoint_quota = share(quota, checkpoint_percent);
  quota_.store(static_cast<int64_t>(std::min<uint64_t>(quota, INT64_MAX)),
               std::memory_order_relaxed);
  checkpoint_quota_.store(checkpoint_quota, std::memory_order_relaxed);
  upper_mark_.store(share(static_cast<uint64_t>(checkpoint_quota), upper_percent),
                    std::memory_order_relaxed);
  lower_mark_.store(share(static_cast<uint64_t>(checkpoint_quota), lower_percent),
                    std::memory_order_relaxed);
  // Limits that shrank below what is held now start a recovery at once.
  if (aboveUpperMark()) requestRecovery();
}

MemoryLimits BucketMemory::limits() const noexcept {
  return {quota_.load(std::memory_order_relaxed), checkpoint_quota_.load(std::memory_order_relaxed),
          upper_mark_.load(std::memory_order_relaxed), lower_mark_.load(std::memory_order_relaxed)};
}

void BucketMemory::requestRecovery() noexcept {
  if (recovery_requested_.load(std::memory_order_relaxed)) return;  // the common case: no RMW
  if (recovery_requested_.exchange(true, std::memory_order_acq_rel)) return;
  if (trigger_) trigger_();
}

}  // namespace syncwrite::vbucket
