#include "vbucket/vbucket_visit_pass.h"

namespace syncwrite::vbucket {

VBucketVisitPass::Progress VBucketVisitPass::runChunk() {
  if (done_) return Progress::kDone;
  visitor_.begin();
  bool visited_in_chunk = false;
  const size_t size = map_.size();
  while (true) {
    if (candidates_ != nullptr) position_ = candidates_->nextFrom(position_);
    if (position_ >= size) break;
    VBucket& vb = map_.at(static_cast<Vbid>(position_));
    if (!filter_.contains(vb.state())) {
      ++position_;
      continue;
    }
    if (visited_in_chunk && visitor_.pauseVisitor()) return Progress::kPaused;
    visitor_.visitBucket(vb);
    ++position_;
    visited_in_chunk = true;
    if (visitor_.shouldStop()) break;
  }
  done_ = true;
  visitor_.complete();
  return Progress::kDone;
}

}  // namespace syncwrite::vbucket
