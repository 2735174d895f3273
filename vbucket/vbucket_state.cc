#include "vbucket/vbucket_state.h"

namespace syncwrite::vbucket {

std::string_view toString(VBucketState state) noexcept {
  switch (state) {
    case VBucketState::kActive:
      return "active";
    case VBucketState::kReplica:
      return "replica";
    case VBucketState::kPending:
      return "pending";
    case VBucketState::kDead:
      return "dead";
  }
  return "unknown";
}

}  // namespace syncwrite::vbucket
