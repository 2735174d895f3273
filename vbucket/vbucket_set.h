// VBucketSet: a fixed-size set of vbucket ids, one bit each, that threads
// update and scan without a lock.
//
// What it is for: a pass that must find the few vbuckets with something to do
// among many idle ones (the durability timeouts: the vbuckets with SyncWrites
// in flight) reads 64 ids per word — 1024 vbuckets are 16 words, two cache
// lines — instead of one cold cache line per vbucket.
//
// insert() and erase() are one atomic read-modify-write of the id's word
// (sequentially consistent, so a caller may order them against other
// sequentially consistent operations); contains() and the scans are loads.
// A scan concurrent with updates sees each word as it was at some instant
// during the scan.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "vbucket/vbucket_state.h"

namespace syncwrite::vbucket {

class VBucketSet {
 public:
  // Ids 0 .. size-1, all absent.
  explicit VBucketSet(size_t size)
      : size_(size), words_(std::make_unique<std::atomic<uint64_t>[]>((size + 63) / 64)) {}
  VBucketSet(const VBucketSet&) = delete;
  VBucketSet& operator=(const VBucketSet&) = delete;

  size_t size() const noexcept { return size_; }

  // Requires id < size().
  void insert(Vbid id) noexcept { word(id).fetch_or(bit(id), std::memory_order_seq_cst); }
  void erase(Vbid id) noexcept { word(id).fetch_and(~bit(id), std::memory_order_seq_cst); }
  bool contains(Vbid id) const noexcept {
    return (word(id).load(std::memory_order_seq_cst) & bit(id)) != 0;
  }

  // The smallest id >= `from` in the set, or size() when there is none.
  // Cost: one load per word from `from`'s on.
  size_t nextFrom(size_t from) const noexcept {
    if (from >= size_) return size_;
    size_t w = from / 64;
    uint64_t bits = words_[w].load(std::memory_order_seq_cst) & (~uint64_t{0} << (from % 64));
    const size_t num_words = (size_ + 63) / 64;
    while (bits == 0) {
      if (++w == num_words) return size_;
      bits = words_[w].load(std::memory_order_seq_cst);
    }
    return w * 64 + static_cast<size_t>(std::countr_zero(bits));
  }

  // Calls fn(Vbid) for each id in the set, in increasing order.
  template <typename Fn>
  void forEach(Fn&& fn) const {
    const size_t num_words = (size_ + 63) / 64;
    for (size_t w = 0; w < num_words; ++w) {
      for (uint64_t bits = words_[w].load(std::memory_order_seq_cst); bits != 0; bits &= bits - 1) {
        fn(static_cast<Vbid>(w * 64 + static_cast<size_t>(std::countr_zero(bits))));
      }
    }
  }

  bool empty() const noexcept { return nextFrom(0) == size_; }

 private:
  static uint64_t bit(Vbid id) noexcept { return uint64_t{1} << (id % 64); }
  std::atomic<uint64_t>& word(Vbid id) const noexcept { return words_[id / 64]; }

  const size_t size_;
  const std::unique_ptr<std::atomic<uint64_t>[]> words_;
};

}  // namespace syncwrite::vbucket
