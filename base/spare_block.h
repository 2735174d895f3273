// SpareBlock and SpareBlockAllocator: a container's allocator that keeps the
// last block it freed and hands it back at the next allocation of the same
// size.
//
// A std::deque used as a queue frees a block each time its front leaves one
// and allocates one each time its back enters a new one. With traffic flowing
// through, those come in turn: keeping the one freed block makes steady
// traffic allocate nothing, where it cost an allocation per
// 512 / sizeof(T) elements (libstdc++'s block), for ever. The price is that
// block, held once traffic has passed, until the SpareBlock goes.
//
// base::Fifo (fifo.h) avoids the churn by being a ring, at the price of up to
// half its room unused while it holds many; this keeps a deque's tight
// footprint and costs one block.
//
// Use: declare the SpareBlock before the container (so it outlives it) and
// construct the container with SpareBlockAllocator<T>(spare). Any other
// allocation the container makes (the deque's map of blocks) goes to the
// heap.
//
// Not thread-safe: as the container it serves.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace syncwrite::base {

class SpareBlock {
 public:
  SpareBlock() = default;
  SpareBlock(const SpareBlock&) = delete;
  SpareBlock& operator=(const SpareBlock&) = delete;
  ~SpareBlock() { release(); }

  // The kept block if it is `bytes` long (the caller owns it then), or null.
  void* take(size_t bytes) noexcept {
    if (block_ == nullptr || bytes != bytes_) return nullptr;
    return std::exchange(block_, nullptr);
  }
  // Keeps `block` (from ::operator new(bytes)) when none is kept; false when
  // one is, and the caller frees it.
  bool keep(void* block, size_t bytes) noexcept {
    if (block_ != nullptr) return false;
    block_ = block;
    bytes_ = bytes;
    return true;
  }
  // Frees the kept block, if any.
  void release() noexcept {
    if (block_ != nullptr) ::operator delete(std::exchange(block_, nullptr));
  }
  // The bytes held (0 or one block's).
  size_t heldBytes() const noexcept { return block_ != nullptr ? bytes_ : 0; }

 private:
  void* block_ = nullptr;
  size_t bytes_ = 0;
};

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
