// SpareBlock and SpareBlockAllocator: a container's allocator that keeps the
// last blocks it freed (one unless told more) and hands them back at the next
// allocations of the same size.
//
// A std::deque used as a queue frees a block each time its front leaves one
// and allocates one each time its back enters a new one. With traffic flowing
// through, those come in turn: keeping the one freed block makes steady
// traffic allocate nothing, where it cost an allocation per
// 512 / sizeof(T) elements (libstdc++'s block), for ever. Traffic that comes
// in bursts crosses several blocks at a time, in and then out: a queue whose
// bursts span k blocks needs k spares (a connection's answer slots, which a
// batch of 32 pipelined requests pushes across two blocks: one spare left
// 0.024 allocations per durable write, docs/benchmarks.md as of d3081a1). The price is
// those blocks, held once traffic has passed, until the SpareBlock goes.
//
// base::Fifo (fifo.h) avoids the churn by being a ring, at the price of up to
// half its room unused while it holds many; this keeps a deque's tight
// footprint and costs the spare blocks.
//
// Use: declare the SpareBlock before the container (so it outlives it) and
// construct the container with SpareBlockAllocator<T>(spare). Any other
// allocation the container makes (the deque's map of blocks) goes to the
// heap.
//
// Memory: 16 bytes; the blocks kept are chained through their own first
// bytes, so keeping more costs nothing until they are kept.
//
// Not thread-safe: as the container it serves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace syncwrite::base {

class SpareBlock {
 public:
  // Keeps up to `max_blocks` freed blocks (at least one).
  explicit SpareBlock(uint16_t max_blocks = 1) noexcept
      : max_blocks_(std::max<uint16_t>(max_blocks, 1)) {}
  SpareBlock(const SpareBlock&) = delete;
  SpareBlock& operator=(const SpareBlock&) = delete;
  ~SpareBlock() { release(); }

  // A kept block if they are `bytes` long (the caller owns it then), or null.
  void* take(size_t bytes) noexcept {
    if (head_ == nullptr || bytes != bytes_) return nullptr;
    void* block = head_;
    head_ = *static_cast<void**>(block);
    --count_;
    return block;
  }
  // Keeps `block` (from ::operator new(bytes)) unless max_blocks are kept or
  // the kept ones have another size; false then, and the caller frees it.
  bool keep(void* block, size_t bytes) noexcept {
    if (count_ == max_blocks_ || bytes < sizeof(void*) || bytes > UINT32_MAX ||
        (head_ != nullptr && bytes != bytes_)) {
      return false;
    }
    *static_cast<void**>(block) = head_;  // the block is ours: chain it
    head_ = block;
    bytes_ = static_cast<uint32_t>(bytes);
    ++count_;
    return true;
  }
  // Frees the kept blocks.
  void release() noexcept {
    while (head_ != nullptr) {
      void* block = head_;
      head_ = *static_cast<void**>(block);
      ::operator delete(block);
    }
    count_ = 0;
  }
  // The bytes held (the kept blocks').
  size_t heldBytes() const noexcept { return size_t{count_} * bytes_; }

 private:
  void* head_ = nullptr;  // the last block kept; each holds the previous one
  uint32_t bytes_ = 0;
  uint16_t count_ = 0;
  uint16_t max_blocks_;
};
static_assert(sizeof(SpareBlock) == 16, "SpareBlock grew: each monitor pays for it");

// Keeps and reuses only blocks of `Element`s: rebound for something else
// (the deque's map of blocks, T*), it allocates from the heap, so that a
// freed map never takes the room kept for a block of elements.
template <typename T, typename Element = T>
class SpareBlockAllocator {
 public:
  using value_type = T;
  // A moved or swapped container keeps its SpareBlock, as std::allocator's
  // would its memory.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  explicit SpareBlockAllocator(SpareBlock& spare) noexcept : spare_(&spare) {}
  template <typename U>
  SpareBlockAllocator(  // NOLINT(google-explicit-constructor)
      const SpareBlockAllocator<U, Element>& other) noexcept
      : spare_(other.spare_) {}

  T* allocate(size_t n) {
    if constexpr (std::is_same_v<T, Element>) {
      static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                    "over-aligned elements unsupported");
      const size_t bytes = n * sizeof(T);
      if (void* block = spare_->take(bytes)) return static_cast<T*>(block);
      return static_cast<T*>(::operator new(bytes));
    } else {
      return std::allocator<T>().allocate(n);
    }
  }
  void deallocate(T* pointer, size_t n) noexcept {
    if constexpr (std::is_same_v<T, Element>) {
      if (!spare_->keep(pointer, n * sizeof(T))) ::operator delete(pointer);
    } else {
      std::allocator<T>().deallocate(pointer, n);
    }
  }

  template <typename U>
  bool operator==(const SpareBlockAllocator<U, Element>& other) const noexcept {
    return spare_ == other.spare_;
  }

 private:
  template <typename U, typename E>
  friend class SpareBlockAllocator;
  SpareBlock* spare_;
};

}  // namespace syncwrite::base
