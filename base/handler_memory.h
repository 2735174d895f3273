// HandlerMemory: room for one asynchronous operation at a time, kept in the
// object that starts it, so a read, write or post issued again and again
// allocates nothing.
//
// boost.asio (1.74) allocates each operation it queues (a socket read, a
// write, a post) through the handler's associated allocator. The default
// keeps one freed block per thread for reuse; a connection's operations are
// allocated on one thread and freed on another, or several are alive on the
// thread at once, so that cache misses and the block comes from malloc.
// perf's malloc probe counted 1.42 allocations per durable write in the
// server before a connection's read, write, turn and drain took their memory
// from here, 1.23 after (docs/benchmarks.md as of d3081a1).
//
// A HandlerMemory is a fixed block (kBytes) that one operation at a time may
// take; asio frees an operation's memory before it calls the handler, so a
// handler that starts the next operation finds the block free. An operation
// that does not fit, or finds the block taken, gets the heap instead
// (heapAllocations() counts those), so correctness never depends on the
// one-at-a-time pattern.
//
// Use: boost::asio::post(ex, base::withMemory(memory, handler)), and the same
// for async_read_some / async_write_some. The wrapper forwards the call and
// names a HandlerAllocator as the handler's allocator_type, which asio's
// associated_allocator picks up. It forwards no other association, so wrap
// only a handler that has none of its own (a plain lambda): the operation
// then runs on the I/O object's or the post's executor, as it would unwrapped.
//
// Thread-safety: allocate() and deallocate() may be called from any thread
// (the block is claimed and released with one atomic flag). The memory must
// outlive every operation using it: keep it in the object the handler holds
// alive, or hand the handler a shared_ptr to it (MemoryHandler).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace syncwrite::base {

class HandlerMemory {
 public:
  // Room for a socket operation with a handler of a few pointers and its
  // strand executor: a reactive_socket_recv_op whose handler holds one
  // shared_ptr is 136 bytes (Boost 1.74, x86-64).
  static constexpr size_t kBytes = 256;

  HandlerMemory() = default;
  HandlerMemory(const HandlerMemory&) = delete;
  HandlerMemory& operator=(const HandlerMemory&) = delete;

  // The block, if `bytes` fit and no operation holds it; the heap otherwise.
  void* allocate(size_t bytes) {
    if (bytes <= kBytes && !taken_.exchange(true, std::memory_order_acquire)) return block_;
    heap_allocations_.fetch_add(1, std::memory_order_relaxed);
    return ::operator new(bytes);
  }

  void deallocate(void* pointer) noexcept {
    if (pointer == static_cast<void*>(block_)) {
      taken_.store(false, std::memory_order_release);
    } else {
      ::operator delete(pointer);
    }
  }

  // Operations that went to the heap (too big, or the block was taken).
  uint64_t heapAllocations() const noexcept {
    return heap_allocations_.load(std::memory_order_relaxed);
  }

 private:
  alignas(std::max_align_t) std::byte block_[kBytes];
  std::atomic<bool> taken_{false};
  std::atomic<uint64_t> heap_allocations_{0};
};

// A standard allocator over one HandlerMemory, for asio's rebinding.
template <typename T>
class HandlerAllocator {
 public:
  using value_type = T;

  explicit HandlerAllocator(HandlerMemory& memory) noexcept : memory_(&memory) {}
  // Implicit, as allocators' converting constructors are.
  template <typename U>
  // NOLINTNEXTLINE(google-explicit-constructor)
  HandlerAllocator(const HandlerAllocator<U>& other) noexcept : memory_(other.memory_) {}

  T* allocate(size_t n) { return static_cast<T*>(memory_->allocate(sizeof(T) * n)); }
  void deallocate(T* pointer, size_t /*n*/) noexcept { memory_->deallocate(pointer); }

  template <typename U>
  bool operator==(const HandlerAllocator<U>& other) const noexcept {
    return memory_ == other.memory_;
  }

 private:
  template <typename U>
  friend class HandlerAllocator;
  HandlerMemory* memory_;
};

// A handler that allocates its operations from a HandlerMemory, which it
// reaches through `Ref`: a plain pointer when the handler keeps the memory's
// owner alive itself (a connection's handlers hold the connection), or a
// shared_ptr when operations may outlive the object that issued them (still
// queued in an io_context destroyed after it).
template <typename Handler, typename Ref = HandlerMemory*>
class MemoryHandler {
 public:
  using allocator_type = HandlerAllocator<Handler>;

  MemoryHandler(Ref memory, Handler handler)
      : memory_(std::move(memory)), handler_(std::move(handler)) {}

  allocator_type get_allocator() const noexcept { return allocator_type(*memory_); }

  template <typename... Args>
  void operator()(Args&&... args) {
    handler_(std::forward<Args>(args)...);
  }

 private:
  Ref memory_;
  Handler handler_;
};

template <typename Handler>
MemoryHandler<std::decay_t<Handler>> withMemory(HandlerMemory& memory, Handler&& handler) {
  return MemoryHandler<std::decay_t<Handler>>(&memory, std::forward<Handler>(handler));
}

template <typename Handler>
MemoryHandler<std::decay_t<Handler>, std::shared_ptr<HandlerMemory>> withMemory(
    std::shared_ptr<HandlerMemory> memory, Handler&& handler) {
  return MemoryHandler<std::decay_t<Handler>, std::shared_ptr<HandlerMemory>>(
      std::move(memory), std::forward<Handler>(handler));
}

}  // namespace syncwrite::base
