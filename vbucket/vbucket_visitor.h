// VBucketVisitor: work done to each vbucket in turn, in chunks.
//
// A pass (VBucketVisitPass, or VBucketVisitorTask on an executor) calls, for
// each chunk of the pass:
//
//   begin();                                   // a chunk starts
//   for each vbucket in id order whose state is wanted:
//     [if not the first of the chunk] if (pauseVisitor()) → pause here;
//     visitBucket(vb);
//     if (shouldStop()) → end the pass here;
//   complete();                                // once, when the pass ends
//
// A pause ends the chunk; the next chunk resumes at the vbucket that was not
// visited. So a visitor may pause as often as it likes and still visits each
// wanted vbucket exactly once per pass — but a chunk always makes progress
// (pauseVisitor() is not asked before its first vbucket). Skipped vbuckets
// (unwanted state) cost a state load and nothing else: pauseVisitor() is
// asked only between vbuckets actually visited.
//
// All calls of one pass are made by one thread at a time (the pass's driver),
// though consecutive chunks may run on different threads.
#pragma once

#include <atomic>
#include <cstdint>

#include "clock/clock_ref.h"
#include "clock/time.h"

namespace syncwrite::vbucket {

class VBucket;

class VBucketVisitor {
 public:
  virtual ~VBucketVisitor() = default;

  // A chunk starts.
  virtual void begin() {}
  // Visit one vbucket.
  virtual void visitBucket(VBucket& vb) = 0;
  // Between two visited vbuckets: true to pause (yield) before the next.
  virtual bool pauseVisitor() { return false; }
  // After each visit: true to end the pass now, leaving the rest unvisited.
  virtual bool shouldStop() { return false; }
  // The pass ended: every wanted vbucket visited, or shouldStop().
  virtual void complete() {}
};

// A visitor that pauses once its chunk has run longer than a maximum
// duration, measured on an injected clock: coarse in production (a read is a
// few loads, whatever the kernel's clock source), manual in tests. The clock
// is read at the start of each chunk and between vbuckets.
//
// Sampling a clock faster than it moves. A coarse clock moves once per tick
// (1-4 ms), yet a read of it costs twice the visit of a vbucket with nothing
// to do (5.5 ns against 2.6 ns here, docs/benchmarks.md). So after a visit
// the subclass marks cheap (noteCheapVisit(): it did no real work), the read
// may be skipped: each reading equal to the previous one doubles the number
// of cheap visits between reads, up to kMaxCheapStride; a reading that moved
// sets it back to one. Any visit not marked cheap is followed by a read, as is
// every visit on a clock that moves between reads (precise, syscall), so the
// pause decision is late by at most kMaxCheapStride - 1 cheap visits — tens of
// nanoseconds, next to a coarse clock's own error of a tick.
//
// Subclasses implement visitBucket() (and may implement shouldStop() and
// complete()). The maximum may be changed at any time from any thread
// (setMaxChunkDuration; a relaxed atomic store), e.g. by a config listener
// for max_vbucket_visit_duration.
class CappedDurationVBucketVisitor : public VBucketVisitor {
 public:
  static constexpr uint32_t kMaxCheapStride = 32;

  CappedDurationVBucketVisitor(clock::ClockRef clock, clock::Duration max_chunk_duration) noexcept
      : clock_(clock), max_chunk_duration_(max_chunk_duration.count()) {}

  void begin() final {
    chunk_start_ = clock_.now();
    last_reading_ = chunk_start_;
    cheap_visit_ = false;
    skip_ = 0;
  }

  // True once more than the maximum has elapsed since the chunk began.
  bool pauseVisitor() final {
    if (cheap_visit_) {
      cheap_visit_ = false;
      if (skip_ != 0) {
        --skip_;
        return false;
      }
    }
    return readAndCheck();
  }

  void setMaxChunkDuration(clock::Duration d) noexcept {
    max_chunk_duration_.store(d.count(), kRelaxed);
  }
  clock::Duration maxChunkDuration() const noexcept {
    return clock::Duration(max_chunk_duration_.load(kRelaxed));
  }

 protected:
  // Called from visitBucket(): this visit did no real work (e.g. a vbucket
  // with nothing to process), so the clock read after it may be skipped.
  void noteCheapVisit() noexcept { cheap_visit_ = true; }

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;

  // The slow path, out of line so that the skip above needs no stack frame.
  bool readAndCheck() noexcept;

  const clock::ClockRef clock_;
  std::atomic<clock::Duration::rep> max_chunk_duration_;
  clock::TimePoint chunk_start_{};
  clock::TimePoint last_reading_{};
  uint32_t cheap_stride_ = 1;  // cheap visits per read, after equal readings
  uint32_t skip_ = 0;          // cheap visits left before the next read
  bool cheap_visit_ = false;   // the visit just made was marked cheap
};

}  // namespace syncwrite::vbucket
