// VBucketMap: a bucket's vbuckets, 0 .. size()-1.
//
// Created up front: every vbucket exists from construction to destruction,
// and a vbucket this node does not serve is simply dead. The alternative —
// creating on demand — would make every lookup a synchronised operation and
// every visitor race with creation and deletion, to save memory that is
// small: 1024 idle vbuckets (the default) hold 663,576 bytes of requested
// heap, 648 per vbucket — the VBucket object, its open checkpoint and its
// slot here; the empty hash table and cursor map allocate nothing, and the
// failover table keeps one entry inline. The
// allocator's own headers and rounding come on top. (g++ 12, libstdc++,
// x86-64.) tests/idle_memory_test.cc counts it allocation by allocation and
// fails when the figure changes.
//
// Thread-safety: the set of vbuckets is fixed at construction, so get(),
// at() and size() take no lock and may be called from any thread; each
// VBucket is itself thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "vbucket/vbucket.h"

namespace syncwrite::config {
class Configuration;
}

namespace syncwrite::vbucket {

class VBucketMap {
 public:
  // `num_vbuckets` vbuckets (1 ..= 65536), all in `initial_state`.
  // std::invalid_argument otherwise.
  VBucketMap(size_t num_vbuckets, VBucketState initial_state,
             CheckpointOptions checkpoint_options = {});
  // max_vbuckets of a bucket-scope configuration.
  VBucketMap(const config::Configuration& bucket_config, VBucketState initial_state,
             CheckpointOptions checkpoint_options = {});

  VBucketMap(const VBucketMap&) = delete;
  VBucketMap& operator=(const VBucketMap&) = delete;

  size_t size() const noexcept { return vbuckets_.size(); }

  // The vbucket, or null when `id` >= size().
  VBucket* get(Vbid id) const noexcept {
    return id < vbuckets_.size() ? vbuckets_[id].get() : nullptr;
  }
  // The vbucket; requires id < size().
  VBucket& at(Vbid id) const noexcept { return *vbuckets_[id]; }

  // How many vbuckets are in `state` right now. O(size()).
  size_t countInState(VBucketState state) const noexcept;

 private:
  std::vector<std::unique_ptr<VBucket>> vbuckets_;
};

}  // namespace syncwrite::vbucket
