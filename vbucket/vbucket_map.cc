#include "vbucket/vbucket_map.h"

#include <stdexcept>
#include <string>

#include "config/configuration.h"

namespace syncwrite::vbucket {

VBucketMap::VBucketMap(size_t num_vbuckets, VBucketState initial_state,
                       CheckpointOptions checkpoint_options) {
  if (num_vbuckets == 0 || num_vbuckets > size_t{1} << 16) {
    throw std::invalid_argument("VBucketMap: num_vbuckets must be 1..65536, got " +
                                std::to_string(num_vbuckets));
  }
  vbuckets_.reserve(num_vbuckets);
  for (size_t id = 0; id < num_vbuckets; ++id) {
    vbuckets_.push_back(
        std::make_unique<VBucket>(static_cast<Vbid>(id), initial_state, checkpoint_options));
  }
}

VBucketMap::VBucketMap(const config::Configuration& bucket_config, VBucketState initial_state,
                       CheckpointOptions checkpoint_options)
    : VBucketMap(bucket_config.get(config::keys::kMaxVbuckets), initial_state, checkpoint_options) {
}

size_t VBucketMap::countInState(VBucketState state) const noexcept {
  size_t n = 0;
  for (const auto& vb : vbuckets_) n += vb->state() == state ? 1 : 0;
  return n;
}

}  // namespace syncwrite::vbucket
