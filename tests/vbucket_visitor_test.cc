// VBucketVisitPass and CappedDurationVBucketVisitor: exactly-once visiting
// with pauses forced by a manual clock, resume position, state filtering and
// a visitor that stops early. No sleeps: time moves only when a test moves it.
#include <chrono>
#include <functional>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clock/manual_clock.h"
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

// Clock reads between cheap visits (CappedDurationVBucketVisitor's sampling).

// Counts its reads; each read advances it by `step` (0: it never moves).
struct CountingClock {
  explicit CountingClock(clock::Duration step) : step(step) {}
  clock::TimePoint now() const {
    ++reads;
    at += step;
    return at;
  }
  const clock::Duration step;
  mutable clock::TimePoint at{};
  mutable int reads = 0;
};

// Marks the chosen visits cheap; may move a manual clock during a visit.
class SamplingVisitor : public CappedDurationVBucketVisitor {
 public:
  SamplingVisitor(clock::ClockRef clock, clock::Duration max, std::function<bool(Vbid)> cheap)
      : CappedDurationVBucketVisitor(clock, max), cheap_(std::move(cheap)) {}
  void visitBucket(VBucket& vb) override {
    visited.push_back(vb.id());
    if (on_visit) on_visit(vb.id());
    if (cheap_(vb.id())) noteCheapVisit();
  }
  std::vector<Vbid> visited;
  std::function<void(Vbid)> on_visit;

 private:
  const std::function<bool(Vbid)> cheap_;
};

constexpr auto kAllCheap = [](Vbid) { return true; };
constexpr auto kNoneCheap = [](Vbid) { return false; };
constexpr int kSamplingVBuckets = 1024;

TEST(CappedDurationVBucketVisitor, CheapVisitsOnAClockThatDoesNotMoveReadItLessOften) {
  VBucketMap map(kSamplingVBuckets, VBucketState::kActive);
  CountingClock still(clock::Duration(0));
  SamplingVisitor v(clock::ClockRef::of(still), milliseconds(25), kAllCheap);
  VBucketVisitPass pass(map, v);
  EXPECT_EQ(runPass(pass), 1);
  EXPECT_EQ(v.visited.size(), size_t{kSamplingVBuckets});
  // 1023 checks between vbuckets, plus the chunk's first read; the stride
  // doubles to kMaxCheapStride and stays there.
  const int kMax = CappedDurationVBucketVisitor::kMaxCheapStride;
  EXPECT_LE(still.reads, kSamplingVBuckets / kMax + 8);
  EXPECT_GE(still.reads, kSamplingVBuckets / kMax);
}

TEST(CappedDurationVBucketVisitor, AVisitNotMarkedCheapIsAlwaysFollowedByARead) {
  VBucketMap map(kSamplingVBuckets, VBucketState::kActive);
  CountingClock still(clock::Duration(0));
  SamplingVisitor v(clock::ClockRef::of(still), milliseconds(25), kNoneCheap);
  VBucketVisitPass pass(map, v);
  runPass(pass);
  EXPECT_EQ(still.reads, kSamplingVBuckets);  // 1023 checks and the chunk's start
}

TEST(CappedDurationVBucketVisitor, AClockThatMovesBetweenReadsIsReadAfterEveryVisit) {
  VBucketMap map(kSamplingVBuckets, VBucketState::kActive);
  CountingClock moving(std::chrono::nanoseconds(1));  // as a precise or syscall clock
  SamplingVisitor v(clock::ClockRef::of(moving), std::chrono::hours(1), kAllCheap);
  VBucketVisitPass pass(map, v);
  runPass(pass);
  EXPECT_EQ(moving.reads, kSamplingVBuckets);
}

// A coarse clock ticks past the maximum during a streak of cheap visits: the
// pause comes within kMaxCheapStride visits of the tick, and the pass still
// visits every vbucket once.
TEST(CappedDurationVBucketVisitor, APauseAfterCheapVisitsIsLateByLessThanTheStride) {
  VBucketMap map(kSamplingVBuckets, VBucketState::kActive);
  clock::ManualClock clock;
  SamplingVisitor v(clock::ClockRef::of(clock), milliseconds(10), kAllCheap);
  constexpr Vbid kTick = 500;
  v.on_visit = [&](Vbid id) {
    if (id == kTick) clock.advance(milliseconds(11));
  };
  VBucketVisitPass pass(map, v);
  ASSERT_EQ(pass.runChunk(), VBucketVisitPass::Progress::kPaused);
  EXPECT_GT(pass.position(), size_t{kTick});
  EXPECT_LE(pass.position(), size_t{kTick} + CappedDurationVBucketVisitor::kMaxCheapStride);
  runPass(pass);
  EXPECT_THAT(v.visited, ElementsAreArray(allIds(kSamplingVBuckets)));
}

// After a long cheap streak, a visit that did real work (not marked cheap)
// and ran past the maximum pauses the chunk right after it.
TEST(CappedDurationVBucketVisitor, AnExpensiveVisitAfterACheapStreakPausesAtOnce) {
  VBucketMap map(kSamplingVBuckets, VBucketState::kActive);
  clock::ManualClock clock;
  constexpr Vbid kExpensive = 700;
  SamplingVisitor v(clock::ClockRef::of(clock), milliseconds(10),
                    [](Vbid id) { return id != kExpensive; });
  v.on_visit = [&](Vbid id) {
    if (id == kExpensive) clock.advance(milliseconds(11));
  };
  VBucketVisitPass pass(map, v);
  ASSERT_EQ(pass.runChunk(), VBucketVisitPass::Progress::kPaused);
  EXPECT_EQ(pass.position(), size_t{kExpensive} + 1);
  EXPECT_EQ(v.visited.back(), kExpensive);
}

}  // namespace
}  // namespace syncwrite::vbucket
