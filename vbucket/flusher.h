// Flusher: what a bucket asks of the reader that persists its vbuckets' logs
// — told where something was queued, paused and slowed for fault rehearsal,
// and counted for stats. kvstore::DiskFlusher (RocksDB) implements it; an
// embedder with its own storage implements it too.
//
// Whatever the implementation, a flusher reports a vbucket persisted up to a
// seqno only once everything up to it is as durable as the bucket gets.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "vbucket/vbucket_state.h"

namespace syncwrite::vbucket {

class Flusher {
 public:
  virtual ~Flusher() = default;

  // `vbid` queued something (`prepare`: a prepare). Called on the writing
  // thread after each queue: a few atomic operations, and a wake-up of the
  // flusher's task for the first mark since it last read.
  virtual void markDirty(Vbid vbid, bool prepare) noexcept = 0;
  // Each run waits `delay` before it reads (a slow disk, rehearsed).
  virtual void setDelay(std::chrono::milliseconds delay) noexcept = 0;
  // Paused: reads nothing (a stuck disk). Resumed: flushes what is queued.
  virtual void setPaused(bool paused) = 0;
  virtual bool paused() const noexcept = 0;

  // Runs that flushed something, and the records they took.
  virtual uint64_t batches() const noexcept = 0;
  virtual uint64_t itemsFlushed() const noexcept = 0;
  // Records queued and not yet persisted, over every vbucket. O(vbuckets).
  virtual size_t itemsQueued() const = 0;
  // Writes to the storage that failed (each retried later), and whether the
  // last one did.
  virtual uint64_t writeFailures() const noexcept = 0;
  virtual bool failing() const noexcept = 0;
};

}  // namespace syncwrite::vbucket
