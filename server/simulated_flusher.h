// SimulatedFlusher: the persistence flusher of a bucket that keeps nothing on
// disk — it reads each vbucket's log through its own cursor, as kv_engine's
// flusher does, and reports what it has read as persisted on this node.
//
// Every vbucket gets a cursor named kCursor at construction (a
// LogCursorReader). Each queued item marks its vbucket dirty (markDirty); the
// first mark after a flush wakes the flusher's executor task. A run waits `flush_delay` first (a
// simulated disk write; writes that arrive meanwhile join the batch), then, for each dirty vbucket,
// passes the cursor on in batches of about kBatch without reading the entries
// (LogCursorReader::passDirty: each checkpoint knows where its last prepare is)
// and, when what it passed holds a prepare, calls
// `persisted(vbid, seqno of the last record passed)` — the durability layer's
// notifyLocalPersistence, which lets writes whose level needs persistence on the active
// (majority_and_persist_on_master, persist_to_majority) commit. An idle bucket runs nothing.
//
// Paused (simulated_flusher_paused, for rehearsing a slow or stuck disk): it
// reads nothing, so persist-level SyncWrites wait (and time out), and the log
// behind its cursor cannot be expelled: checkpoint memory grows to the
// checkpoint quota and writes are then refused with Etmpfail. Resumed, it
// flushes what is queued at once.
//
// What marks a vbucket: the bucket, told of every item its vbuckets queue
// (vbucket::QueueListener) — writes, and the commits and aborts the
// durability layer queues.
//
// Thread-safety: every member may be called from any thread.
// Lifetime: the map and the pool must outlive this object, and `persisted`
// must stay callable until its destructor returns (it unregisters the task and
// waits for a run in progress).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/executor_pool.h"
#include "vbucket/flusher.h"
#include "vbucket/log_cursor_reader.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::server {

class SimulatedFlusher final : public vbucket::Flusher {
 public:
  using Persisted = std::function<void(vbucket::Vbid, vbucket::Seqno)>;
  static constexpr std::string_view kCursor = "persistence";
  static constexpr size_t kBatch = 1024;
  // Under a steady write load, runs are at least kMinInterval apart while a
  // SyncWrite awaits this node's persistence, and kPlainInterval otherwise:
  // a run that flushed something comes back after it, taking what was
  // marked meanwhile in one batch, rather than being woken by the first mark
  // (each wake is a futex call and a context switch: in a profile of the
  // version that woke per mark, the kernel's wake-up and switch paths took
  // about a fifth of the server's samples at ~400k writes/s;
  // docs/benchmarks.md as of d3081a1, mcbp_load). The pool's timer slack
  // (executor/timer_thread.h) puts the next run at the start of a 1 ms slot:
  // a run woken by the timer starts just after a slot began, so the next
  // comes two slots on, in the same timer wake-up as the event-driven
  // timeout timer's 2 ms slot. It adds up to those 2 ms to a persist-level
  // write's latency, only while writes keep coming.
  static constexpr std::chrono::milliseconds kMinInterval{1};
  // With no SyncWrite awaiting persistence nobody waits for a run; the
  // cursor only has to keep up, so that the log behind it can be expelled.
  // Under plain writes at 1 in flight the timer thread then woke 200 times
  // a second instead of 560, and each worker ~185 instead of ~730: wake-ups
  // that took the CPU the I/O threads and the clients wait for
  // (docs/benchmarks.md, "Quieter ticks under plain writes"). A
  // persist-level prepare queued during that pause wakes the flusher
  // (markDirty()), so such a write still waits at most the short pace
  // (plus flush_delay, which a wake does not cut short).
  static constexpr std::chrono::milliseconds kPlainInterval{10};

  // Whether a SyncWrite awaits this node's persistence; true from before
  // such a write's prepare is queued, as seen by the thread that queues it
  // (durability::BucketDurability::awaitsPersistence()).
  using Awaited = std::function<bool()>;

  // `plain_interval`: kPlainInterval, unless a test needs a pace it can
  // tell from a wake-up.
  SimulatedFlusher(std::string name, vbucket::VBucketMap& map, executor::ExecutorPool& pool,
                   Persisted persisted, Awaited awaited,
                   std::chrono::milliseconds plain_interval = kPlainInterval);
  ~SimulatedFlusher() override;
  SimulatedFlusher(const SimulatedFlusher&) = delete;
  SimulatedFlusher& operator=(const SimulatedFlusher&) = delete;

  // `vbid` has queued something to flush (`prepare`: a prepare); the first
  // mark after a flush wakes the task (LogCursorReader::markDirty). A
  // prepare that awaits persistence also wakes a task on the plain pace: the
  // run it takes sees the write and goes on at kMinInterval. Any other
  // prepare costs one call of `awaited`.
  void markDirty(vbucket::Vbid vbid, bool prepare) noexcept override {
    if (reader_.markDirty(vbid)) pool_.wake(id_);
    if (prepare) notePrepare();
  }

  // For the batches that follow.
  void setDelay(std::chrono::milliseconds delay) noexcept override;
  // Paused: reads nothing. Resumed: flushes what is queued at once.
  void setPaused(bool paused) override;
  bool paused() const noexcept override { return paused_.load(std::memory_order_acquire); }

  uint64_t batches() const noexcept override { return batches_.load(std::memory_order_relaxed); }
  // On the plain pace: snoozing the plain interval after a run that flushed.
  bool plainPace() const noexcept { return plain_pace_.load(std::memory_order_relaxed); }
  uint64_t itemsFlushed() const noexcept override { return items_.load(std::memory_order_relaxed); }
  // Items queued and not yet read by the flusher, over every vbucket: its
  // cursors' distance from the head. O(vbuckets).
  size_t itemsQueued() const override { return reader_.itemsQueued(); }

 private:
  class Task;
  struct Flushed {
    bool any = false;   // something was read
    bool more = false;  // a vbucket had a batch or more: read again
  };
  // One flush of every dirty vbucket.
  Flushed flushDirty();
  // markDirty() of a prepare, once the vbucket is marked.
  void notePrepare() noexcept;
  // After a run that flushed something: the pause until the next run,
  // kMinInterval or kPlainInterval (plain_pace_).
  std::chrono::milliseconds paceAfterFlush() noexcept;

  executor::ExecutorPool& pool_;
  const Persisted persisted_;
  const Awaited awaited_;
  const std::chrono::milliseconds plain_interval_;
  // True while the task snoozes the plain interval after a run that
  // flushed: the first persist-level prepare clears it and wakes the task.
  // Cleared at the start of every run (so a wake never cuts flush_delay
  // short), set only by paceAfterFlush(). Written by the task before it
  // looks at `awaited_` again, read by writers after their count (raised
  // sequentially consistent, as these are): one of the two sees the other.
  std::atomic<bool> plain_pace_{false};
  vbucket::LogCursorReader reader_;
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> items_{0};
  executor::Taskable owner_;
  std::shared_ptr<Task> task_;
  executor::TaskId id_ = executor::kNoTask;
};

}  // namespace syncwrite::server
