// Futex (internal to executor/): sleep until a 32-bit atomic changes, and
// wake such sleepers, with nothing in between.
//
// Why not std::atomic<T>::wait/notify: libstdc++ 12 spins and calls
// sched_yield sixteen times inside wait() before it sleeps, so a worker that
// has counted itself as asleep is in fact still running for a while, and
// every push in that window pays a wake-up system call. Its notify also uses
// a shared (not process-private) futex, which costs the kernel a page lookup.
// The ready queue does its own spinning (ready_queue.h), so here a wait is the
// system call alone, on a private futex. Elsewhere than Linux these fall back
// to the standard calls.
#pragma once

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace syncwrite::executor::futex {

// Sleeps while `word` holds `expected` (returns at once if it does not; may
// also return spuriously: callers re-check their condition).
inline void wait(std::atomic<uint32_t>& word, uint32_t expected) noexcept {
#if defined(__linux__)
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
#else
  word.wait(expected, std::memory_order_acquire);
#endif
}

// Wakes up to `count` threads sleeping in wait() on `word`.
inline void wake(std::atomic<uint32_t>& word, int count) noexcept {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
#else
  if (count == 1) {
    word.notify_one();
  } else {
    word.notify_all();
  }
#endif
}

}  // namespace syncwrite::executor::futex
