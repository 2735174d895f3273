#include "clock/ticked_coarse_clock.h"

#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "clock/coarse_clock.h"

namespace syncwrite::clock {

namespace ticked_coarse_detail {
constinit std::atomic<Duration::rep> published{0};
}  // namespace ticked_coarse_detail

namespace {

constexpr Duration kTick = std::chrono::milliseconds(1);

struct Ticker {
  std::mutex mutex;
  std::condition_variable wake;
  // Leases taken and returned, ever. Two counters rather than one count of
  // leases held, so the ticker also sees the leases that came and went
  // between two of its ticks (a polling chunk is a few microseconds).
  std::atomic<uint64_t> acquires{0};
  std::atomic<uint64_t> releases{0};
  // True while the ticker waits for a lease, and before it exists. The
  // store-then-load on each side (acquires then parked in acquire(); parked
  // then acquires in run()), all seq_cst, means that a lease taken as the
  // ticker parks is seen by one side or the other: never a lease with a
  // parked ticker.
  std::atomic<bool> parked{true};
  bool started = false;  // guarded by mutex
};

// Leaked on purpose: see the header (no destruction-order hazard at exit).
Ticker& ticker() {
  static Ticker* const t = new Ticker;
  return *t;
}

// Publishes `t` unless a later time is already published: readings never go
// backwards, whichever of the ticker and acquire() publishes last.
void publish(TimePoint t) noexcept {
  const Duration::rep ns = t.time_since_epoch().count();
  auto& published = ticked_coarse_detail::published;
  Duration::rep current = published.load(std::memory_order_relaxed);
  while (ns > current && !published.compare_exchange_weak(current, ns, std::memory_order_relaxed)) {
  }
}

void run(Ticker* t) {
  pthread_setname_np(pthread_self(), "sw-clock-tick");
  uint64_t seen = t->acquires.load(std::memory_order_seq_cst);
  int idle_ticks = 0;
  std::unique_lock lock(t->mutex);
  t->parked.store(false, std::memory_order_seq_cst);
  for (;;) {
    lock.unlock();
    publish(CoarseClock::now());
    std::this_thread::sleep_for(kTick);
    lock.lock();
    const uint64_t acquires = t->acquires.load(std::memory_order_seq_cst);
    const bool leased = acquires != seen || acquires != t->releases.load(std::memory_order_seq_cst);
    seen = acquires;
    idle_ticks = leased ? 0 : idle_ticks + 1;
    if (idle_ticks < TickedCoarseClock::kIdleTicksBeforePark) continue;
    t->parked.store(true, std::memory_order_seq_cst);
    t->wake.wait(lock, [&] { return t->acquires.load(std::memory_order_seq_cst) != seen; });
    t->parked.store(false, std::memory_order_seq_cst);
    idle_ticks = 0;
  }
}

}  // namespace

void TickedCoarseClock::acquire() noexcept {
  Ticker& t = ticker();
  t.acquires.fetch_add(1, std::memory_order_seq_cst);
  if (!t.parked.load(std::memory_order_seq_cst)) return;
  // The ticker is parked (or about to see this lease and stay up): the
  // published time may be old, so publish a fresh one before returning.
  publish(CoarseClock::now());
  std::lock_guard lock(t.mutex);
  if (!t.started) {
    t.started = true;
    std::thread(run, &t).detach();  // never joined: see the header
  }
  t.wake.notify_one();
}

void TickedCoarseClock::release() noexcept {
  ticker().releases.fetch_add(1, std::memory_order_seq_cst);
}

TickedCoarseClock::duration TickedCoarseClock::tick() noexcept { return kTick; }

bool TickedCoarseClock::ticking() noexcept {
  return !ticker().parked.load(std::memory_order_seq_cst);
}

}  // namespace syncwrite::clock
