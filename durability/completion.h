// Completion: what an accepted SyncWrite calls, once, with its Resolution
// (durability/sync_write.h says when and on which thread).
//
// A move-only callable in 24 bytes. std::function and absl::AnyInvocable take
// 32 on x86-64 (a manager and an invoker pointer besides 16 bytes of
// storage); a Completion keeps one pointer. The monitor holds a Completion
// for every pending SyncWrite, so those 8 bytes are paid per pending write
// (issue 23's bound; docs/memory.md).
//
// Storage: a callable that is trivially copyable, at most 16 bytes and at
// most 8-aligned (the server's LateReply: a sink pointer and a ticket) lives
// in place, with no allocation. Any other callable (a lambda capturing a
// std::string, a std::function) is moved to the heap: one allocation, as
// libstdc++'s std::function makes for such captures.
//
// Not thread-safe: one Completion is used by one thread at a time (the layer
// hands it from the writer to whichever thread resolves the write).
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace syncwrite::durability {

struct Resolution;

class Completion {
 public:
  Completion() noexcept = default;
  Completion(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor): as std::function

  // Any callable taking a `const Resolution&`; its result is ignored.
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, Completion> &&
                                        !std::is_same_v<D, std::nullptr_t> &&
                                        std::is_invocable_v<D&, const Resolution&>>>
  Completion(F&& f) {  // NOLINT(google-explicit-constructor): as std::function
    if constexpr (kInPlace<D>) {
      ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
      call_ = [](Op op, void* storage, const Resolution* resolution) {
        if (op == Op::kCall) (*std::launder(static_cast<D*>(storage)))(*resolution);
      };
    } else {
      ::new (static_cast<void*>(storage_)) D*(new D(std::forward<F>(f)));
      call_ = [](Op op, void* storage, const Resolution* resolution) {
        D* target = *std::launder(static_cast<D**>(storage));
        if (op == Op::kCall) {
          (*target)(*resolution);
        } else {
          delete target;
        }
      };
    }
  }

  // The moved-from Completion is empty. Both kinds move by their bytes: an
  // in-place callable is trivially copyable, and a heap one is a pointer.
  Completion(Completion&& other) noexcept : call_(std::exchange(other.call_, nullptr)) {
    std::memcpy(storage_, other.storage_, sizeof(storage_));
  }
  Completion& operator=(Completion&& other) noexcept {
    if (this != &other) {
      reset();
      std::memcpy(storage_, other.storage_, sizeof(storage_));
      call_ = std::exchange(other.call_, nullptr);
    }
    return *this;
  }
  Completion& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;
  ~Completion() { reset(); }

  explicit operator bool() const noexcept { return call_ != nullptr; }

  // Calls the callable. Requires a non-empty Completion. Exceptions from the
  // callable propagate.
  void operator()(const Resolution& resolution) const {
    call_(Op::kCall, const_cast<unsigned char*>(storage_), &resolution);
  }

 private:
  enum class Op { kCall, kDestroy };
  // Calls the callable in `storage`, or destroys it (a no-op in place).
  using Call = void (*)(Op, void* storage, const Resolution* resolution);
  static constexpr size_t kStorageBytes = 16;

  template <typename D>
  static constexpr bool kInPlace = std::is_trivially_copyable_v<D> && sizeof(D) <= kStorageBytes &&
                                   alignof(D) <= 8;

  void reset() noexcept {
    if (call_ != nullptr) std::exchange(call_, nullptr)(Op::kDestroy, storage_, nullptr);
  }

  alignas(8) unsigned char storage_[kStorageBytes] = {};
  Call call_ = nullptr;
};

static_assert(sizeof(Completion) == 24, "Completion grew: a pending SyncWrite costs more");

}  // namespace syncwrite::durability
