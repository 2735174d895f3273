#include "vbucket/vbucket_visitor.h"

#include <algorithm>

namespace syncwrite::vbucket {

bool CappedDurationVBucketVisitor::readAndCheck() noexcept {
  const clock::TimePoint now = clock_.now();
  cheap_stride_ = now == last_reading_ ? std::min(cheap_stride_ * 2, kMaxCheapStride) : 1;
  last_reading_ = now;
  skip_ = cheap_stride_ - 1;
  return now - chunk_start_ > clock::Duration(max_chunk_duration_.load(kRelaxed));
}

}  // namespace syncwrite::vbucket
