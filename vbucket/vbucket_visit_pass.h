// VBucketVisitPass: drives a VBucketVisitor over a VBucketMap, one chunk at a
// time, remembering where it paused.
//
// This is the executor-free core of VBucketVisitorTask: runChunk() runs until
// the visitor pauses or the pass ends; the next runChunk() resumes at the
// vbucket where it paused; restart() begins a new pass at vbucket 0. Every
// vbucket whose state is in the filter (checked when the pass reaches it) is
// visited exactly once per pass, however many chunks the pass takes.
//
// Cost per vbucket: one atomic load of its state; for a visited one, the
// visitor's calls (see vbucket_visitor.h). With `candidates`, only the
// vbuckets in that set (when the pass reaches them) are considered at all:
// a pass costs one load per 64 vbuckets plus the candidates' own — what lets
// a periodic pass over many idle vbuckets read a few cache lines, not one
// per vbucket.
//
// Not thread-safe: one driver at a time. The map and the visitor must
// outlive the pass.
#pragma once

#include <cstddef>

#include "vbucket/vbucket_map.h"
#include "vbucket/vbucket_set.h"
#include "vbucket/vbucket_state.h"
#include "vbucket/vbucket_visitor.h"

namespace syncwrite::vbucket {

class VBucketVisitPass {
 public:
  enum class Progress { kPaused, kDone };

  // Ready to start a pass at vbucket 0. `candidates` (optional, of the
  // map's size, outliving the pass): visit only the vbuckets in it.
  VBucketVisitPass(const VBucketMap& map, VBucketVisitor& visitor,
                   StateFilter filter = StateFilter::all(),
                   const VBucketSet* candidates = nullptr) noexcept
      : map_(map), visitor_(visitor), filter_(filter), candidates_(candidates) {}

  // Runs one chunk. kDone when the pass has ended (and complete() was
  // called); calling it again then does nothing and returns kDone.
  Progress runChunk();

  // Begins a new pass at vbucket 0.
  void restart() noexcept {
    position_ = 0;
    done_ = false;
  }

  bool done() const noexcept { return done_; }
  // The next vbucket the pass will consider (with candidates, the pass
  // skips from here to the next candidate).
  size_t position() const noexcept { return position_; }
  StateFilter filter() const noexcept { return filter_; }

 private:
  const VBucketMap& map_;
  VBucketVisitor& visitor_;
  const StateFilter filter_;
  const VBucketSet* const candidates_;
  size_t position_ = 0;
  bool done_ = false;
};

}  // namespace syncwrite::vbucket
