// VBucketMap: a bucket's vbuckets, 0 .. size()-1.
//
// Created up front: every vbucket exists from construction to destruction,
// and a vbucket this node does not serve is simply dead. The alternative —
// creating on demand — would make every lookup a synchronised operation and
// every visitor race with creation and deletion, to save memory that is
// small: an idle vbucket costs 624 bytes — 616 of heap as glibc counts it
// (the 448-byte VBucket and its open checkpoint, with chunk headers and the
// padding of their 64-byte alignment; the empty hash table and cursor map
// allocate nothing) plus its 8-byte slot here — about 624 KiB for the default
// 1024 vbuckets (g++ 12, x86-64).
// tests/vbucket_map_test.cc measures it (IdleVBucketMemory) and fails if it
// regresses past 2 KiB.
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
  VBucketMap(const config::Configuration& bucket_config, VBucketState initial_state);

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
