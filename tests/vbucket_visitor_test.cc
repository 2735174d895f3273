// VBucketVisitPass and CappedDurationVBucketVisitor: exactly-once visiting
// with pauses forced by a manual clock, resume position, state filtering and
// a visitor that stops early. No sleeps: time moves only when a test moves it.
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clock/coarse_clock.h"
#include "clock/manual_clock.h"
#include "clock/precise_clock.h"
#include "clock/syscall_clock.h"
#include "clock/ticked_coarse_clock.h"
#include "vbucket/vbucket_visit_pass.h"

namespace syncwrite::vbucket {
namespace {

using std::chrono::milliseconds;
using testing::ElementsAre;
using testing::ElementsAreArray;

std::vector<Vbid> allIds(size_t n) {
  std::vector<Vbid> out;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<Vbid>(i));
  return out;
}

// Records visits; each visit advances the manual clock by `cost`.
class TimedVisitor : public CappedDurationVBucketVisitor {
 public:
  TimedVisitor(clock::ManualClock& clock, clock::Duration max, clock::Duration cost)
      : CappedDurationVBucketVisitor(clock::ClockRef::of(clock), max), clock_(clock), cost_(cost) {}
  void visitBucket(VBucket& vb) override {
    visited.push_back(vb.id());
    clock_.advance(cost_);
  }
  void complete() override { ++completes; }

  std::vector<Vbid> visited;
  int completes = 0;

 private:
  clock::ManualClock& clock_;
  const clock::Duration cost_;
};

// Runs chunks until the pass is done; returns how many chunks it took.
int runPass(VBucketVisitPass& pass) {
  int chunks = 1;
  while (pass.runChunk() == VBucketVisitPass::Progress::kPaused) ++chunks;
  return chunks;
}

TEST(CappedDurationVBucketVisitor, PausesOnlyAfterTheMaximumHasElapsed) {
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(10), milliseconds(0));
  v.begin();
  EXPECT_FALSE(v.pauseVisitor());
  clock.advance(milliseconds(10));
  EXPECT_FALSE(v.pauseVisitor()) << "exactly the maximum is not longer than it";
  clock.advance(milliseconds(1));
  EXPECT_TRUE(v.pauseVisitor());
  v.begin();  // a new chunk starts the measurement again
  EXPECT_FALSE(v.pauseVisitor());
  v.setMaxChunkDuration(milliseconds(0));
  clock.advance(std::chrono::nanoseconds(1));
  EXPECT_TRUE(v.pauseVisitor());
  EXPECT_EQ(v.maxChunkDuration(), milliseconds(0));
}

TEST(VBucketVisitPass, WithoutPausesVisitsEveryVBucketOnceInOneChunk) {
  VBucketMap map(32, VBucketState::kActive);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(25), milliseconds(0));
  VBucketVisitPass pass(map, v);
  EXPECT_EQ(runPass(pass), 1);
  EXPECT_THAT(v.visited, ElementsAreArray(allIds(32)));
  EXPECT_EQ(v.completes, 1);
  EXPECT_TRUE(pass.done());
  EXPECT_EQ(pass.runChunk(), VBucketVisitPass::Progress::kDone);
  EXPECT_EQ(v.completes, 1) << "a finished pass does not complete twice";
}

// Each visit costs 4 ms against a 10 ms cap: a chunk visits 3 vbuckets
// (after the third, 12 ms > 10 ms), then pauses before the fourth.
TEST(VBucketVisitPass, PausesForcedByTheClockStillVisitEachVBucketExactlyOnce) {
  VBucketMap map(32, VBucketState::kActive);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(10), milliseconds(4));
  VBucketVisitPass pass(map, v);

  ASSERT_EQ(pass.runChunk(), VBucketVisitPass::Progress::kPaused);
  EXPECT_THAT(v.visited, ElementsAre(0, 1, 2));
  EXPECT_EQ(pass.position(), 3u) << "resumes at the vbucket it did not visit";
  ASSERT_EQ(pass.runChunk(), VBucketVisitPass::Progress::kPaused);
  EXPECT_THAT(v.visited, ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(v.completes, 0);

  runPass(pass);
  EXPECT_THAT(v.visited, ElementsAreArray(allIds(32)));
  EXPECT_EQ(v.completes, 1);
}

TEST(VBucketVisitPass, AVisitorThatAlwaysWantsToPauseStillMakesProgress) {
  VBucketMap map(8, VBucketState::kActive);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(0), milliseconds(1));  // over the cap after every visit
  VBucketVisitPass pass(map, v);
  EXPECT_EQ(runPass(pass), 8) << "one vbucket per chunk";
  EXPECT_THAT(v.visited, ElementsAreArray(allIds(8)));
}

TEST(VBucketVisitPass, RestartBeginsANewPassAtTheFirstVBucket) {
  VBucketMap map(6, VBucketState::kActive);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(5), milliseconds(3));
  VBucketVisitPass pass(map, v);
  runPass(pass);
  pass.restart();
  EXPECT_EQ(pass.position(), 0u);
  runPass(pass);
  EXPECT_THAT(v.visited, ElementsAre(0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5));
  EXPECT_EQ(v.completes, 2);
}

TEST(VBucketVisitPass, SkipsVBucketsNotInAWantedState) {
  VBucketMap map(10, VBucketState::kReplica);
  for (Vbid id : {1, 4, 5, 9}) map.at(id).setState(VBucketState::kActive);
  map.at(7).setState(VBucketState::kPending);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(1), milliseconds(2));  // pause after every visit
  VBucketVisitPass pass(map, v, {VBucketState::kActive, VBucketState::kPending});
  const int chunks = runPass(pass);
  EXPECT_THAT(v.visited, ElementsAre(1, 4, 5, 7, 9));
  EXPECT_EQ(chunks, 5) << "skipped vbuckets neither cost a chunk nor trigger a pause";
}

TEST(VBucketVisitPass, StateIsCheckedWhenThePassReachesTheVBucket) {
  VBucketMap map(4, VBucketState::kActive);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(1), milliseconds(2));
  VBucketVisitPass pass(map, v, {VBucketState::kActive});
  ASSERT_EQ(pass.runChunk(), VBucketVisitPass::Progress::kPaused);  // visited 0
  map.at(1).setState(VBucketState::kDead);                          // where it paused: now unwanted
  map.at(0).setState(VBucketState::kDead);  // already visited: not revisited either way
  runPass(pass);
  EXPECT_THAT(v.visited, ElementsAre(0, 2, 3));
}

TEST(VBucketVisitPass, AVisitorThatStopsEarlyEndsThePass) {
  class StopAfter : public VBucketVisitor {
   public:
    explicit StopAfter(size_t n) : n_(n) {}
    void visitBucket(VBucket& vb) override { visited.push_back(vb.id()); }
    bool pauseVisitor() override { return true; }  // and pauses between every two
    bool shouldStop() override { return visited.size() == n_; }
    void complete() override { ++completes; }
    std::vector<Vbid> visited;
    int completes = 0;

   private:
    const size_t n_;
  };
  VBucketMap map(10, VBucketState::kActive);
  StopAfter v(3);
  VBucketVisitPass pass(map, v);
  EXPECT_EQ(runPass(pass), 3);
  EXPECT_THAT(v.visited, ElementsAre(0, 1, 2));
  EXPECT_EQ(v.completes, 1);
  EXPECT_TRUE(pass.done());
}

TEST(VBucketVisitPass, EmptyFilterVisitsNothingAndCompletes) {
  VBucketMap map(4, VBucketState::kActive);
  clock::ManualClock clock;
  TimedVisitor v(clock, milliseconds(1), milliseconds(2));
  VBucketVisitPass pass(map, v, StateFilter());
  EXPECT_EQ(runPass(pass), 1);
  EXPECT_TRUE(v.visited.empty());
  EXPECT_EQ(v.completes, 1);
}

TEST(VBucketVisitPass, EveryChunkEndsWithEndChunk) {
  class Counting : public VBucketVisitor {
   public:
    void begin() override { ++begins; }
    void visitBucket(VBucket&) override {}
    bool pauseVisitor() override { return true; }
    void endChunk() override { ++ends; }
    int begins = 0;
    int ends = 0;
  };
  VBucketMap map(5, VBucketState::kActive);
  Counting v;
  VBucketVisitPass pass(map, v);
  EXPECT_EQ(runPass(pass), 5);
  EXPECT_EQ(v.begins, 5);
  EXPECT_EQ(v.ends, 5);
}

TEST(CappedDurationVBucketVisitor, ReadsTheTickedClockOnlyForTheCoarseClock) {
  struct V : CappedDurationVBucketVisitor {
    using CappedDurationVBucketVisitor::CappedDurationVBucketVisitor;
    void visitBucket(VBucket&) override {}
  };
  clock::ManualClock manual;
  EXPECT_TRUE(V(clock::ClockRef::of<clock::CoarseClock>(), milliseconds(1)).readsTickedClock());
  EXPECT_FALSE(V(clock::ClockRef::of<clock::PreciseClock>(), milliseconds(1)).readsTickedClock());
  EXPECT_FALSE(V(clock::ClockRef::of<clock::SyscallClock>(), milliseconds(1)).readsTickedClock())
      << "the syscall clock must stay as dear as it is";
  EXPECT_FALSE(V(clock::ClockRef::of(manual), milliseconds(1)).readsTickedClock());
}

// Waits (polling, with a generous hang guard) for the ticker's state.
bool tickingBecomes(bool want) {
  const auto guard = clock::PreciseClock::now() + std::chrono::seconds(60);
  while (clock::TickedCoarseClock::ticking() != want) {
    if (clock::PreciseClock::now() > guard) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// A coarse-clock visitor holds a lease on the ticked clock while a chunk
// runs, and returns it when the chunk ends — also when a visit throws — so an
// idle process has no ticking thread.
TEST(CappedDurationVBucketVisitor, CoarseClockLeaseLastsOneChunk) {
  class Watching : public CappedDurationVBucketVisitor {
   public:
    Watching()
        : CappedDurationVBucketVisitor(clock::ClockRef::of<clock::CoarseClock>(),
                                       std::chrono::hours(1)) {}
    void visitBucket(VBucket& vb) override {
      if (vb.id() == 0) ticked_while_visiting = tickingBecomes(true);
      if (throw_at_one && vb.id() == 1) throw std::runtime_error("visit failed");
    }
    bool ticked_while_visiting = false;
    bool throw_at_one = false;
  };
  VBucketMap map(3, VBucketState::kActive);
  Watching v;
  VBucketVisitPass pass(map, v);
  EXPECT_EQ(runPass(pass), 1);
  EXPECT_TRUE(v.ticked_while_visiting);
  EXPECT_TRUE(tickingBecomes(false)) << "the lease outlived the chunk";

  v.throw_at_one = true;
  pass.restart();
  EXPECT_THROW(pass.runChunk(), std::runtime_error);
  EXPECT_TRUE(tickingBecomes(false)) << "the lease outlived a chunk that threw";
}

}  // namespace
}  // namespace syncwrite::vbucket
