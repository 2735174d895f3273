// Never early (issue 16): a SyncWrite is answered ambiguous only once its
// timeout has fully elapsed in real time since it was added, whatever the
// resolution of the clock the timeout paths read, in both modes and across a
// live mode switch. Real time is a manual clock; the coarse clock is a
// CoarseView of it that lags by less than one step (tests/durability_test_support.h).
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "durability/bucket_durability.h"
#include "tests/durability_test_support.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using testing::CoarseView;
using testing::eventually;
using vbucket::VBucketState;

constexpr auto kTimeout = 50ms;
constexpr size_t kNeverEarlyVBuckets = 2;

enum class Modes { kEventDriven, kPolling, kEventDrivenThenPolling, kPollingThenEventDriven };

TimeoutMode firstMode(Modes m) {
  return m == Modes::kPolling || m == Modes::kPollingThenEventDriven ? TimeoutMode::kPolling
                                                                     : TimeoutMode::kEventDriven;
}
bool switches(Modes m) {
  return m == Modes::kEventDrivenThenPolling || m == Modes::kPollingThenEventDriven;
}

// Runs one write at the head of vbucket 0 and one behind a 30 s head in
// vbucket 1, both with kTimeout, added at a real time that is not on a coarse
// step; advances real time in steps of a quarter of the resolution, asking
// the mode to look after each step, until both are answered. Returns the
// real time elapsed from the writes to each answer (as the completion saw
// the clock; the decision read it no later).
class NeverEarlyRun {
 public:
  NeverEarlyRun(Modes modes, clock::Duration resolution, bool stamp_with_coarse)
      : modes_(modes), resolution_(resolution), coarse_(real_, resolution) {
    EXPECT_TRUE(
        config_
            .loadJson({{"max_vbuckets", kNeverEarlyVBuckets},
                       {"durability_timeout_mode",
                        firstMode(modes) == TimeoutMode::kPolling ? "polling" : "event-driven"}})
            .ok());
    map_ = std::make_unique<vbucket::VBucketMap>(config_, VBucketState::kActive);
    const clock::ClockRef coarse = clock::ClockRef::of(coarse_);
    const clock::ClockRef stamp = stamp_with_coarse ? coarse : clock::ClockRef::of(real_);
    bucket_ = std::make_unique<BucketDurability>("never-early", config_, *map_, pool_,
                                                 testing::chainOf({"replica1"}),
                                                 TimeoutClocks{stamp, coarse});
  }
  ~NeverEarlyRun() { bucket_.reset(); }

  // Real time elapsed at the answers of {head write, write behind a head}.
  std::pair<clock::Duration, clock::Duration> go() {
    real_.advance(resolution_ * 9 / 10);  // just before a coarse step: the view lags most
    const clock::TimePoint t0 = real_.now();
    write(0, "head", kTimeout);
    write(1, "long", 30000ms);
    write(1, "behind", kTimeout);
    const clock::Duration step = std::max<clock::Duration>(resolution_ / 4, 100us);
    while (answeredCount() < 2 && real_.now() - t0 < kTimeout + 4 * resolution_) {
      real_.advance(step);
      if (switches(modes_) && !switched_ && real_.now() - t0 >= kTimeout / 2) {
        const bool polling = bucket_->mode() == TimeoutMode::kPolling;
        EXPECT_TRUE(
            config_.setFromText("durability_timeout_mode", polling ? "event-driven" : "polling")
                .ok());
        switched_ = true;
      }
      lookForTimeouts();
    }
    auto at = [&](const std::string& key) {
      std::lock_guard lock(mutex_);  // a late answer may still be arriving
      auto it = answered_at_.find(key);
      return it == answered_at_.end() ? clock::Duration::max() : it->second - t0;
    };
    return {at("head"), at("behind")};
  }

 private:
  // The completions write answered_at_ on the pool's threads, under mutex_.
  size_t answeredCount() {
    std::lock_guard lock(mutex_);
    return answered_at_.size();
  }
  void write(Vbid vb, const std::string& key, std::chrono::milliseconds timeout) {
    const WriteResult r = bucket_->write(
        vb,
        WriteRequest{WriteOp::kSet, key, "v", 1,
                     Requirements{Level::kMajority,
                                  *Timeout::fromMillis(static_cast<uint64_t>(timeout.count()))}},
        [this, key](const Resolution& res) {
          if (res.committed) return;
          std::lock_guard lock(mutex_);
          answered_at_.emplace(key, real_.now());
        });
    EXPECT_EQ(r.status, WriteStatus::kPending);
  }
  // Makes the current mode look at least once after this call.
  void lookForTimeouts() {
    const DurabilityStats before = bucket_->stats();
    bucket_->checkTimeoutsNow();
    if (bucket_->mode() == TimeoutMode::kPolling) {
      ASSERT_TRUE(
          eventually([&] { return bucket_->stats().polling_passes >= before.polling_passes + 1; }));
      bucket_->checkTimeoutsNow();  // a pass started after the advance
      ASSERT_TRUE(
          eventually([&] { return bucket_->stats().polling_passes >= before.polling_passes + 2; }));
      return;
    }
    // Twice, as for polling: a timer that fired by itself (its real-time
    // sleep ended) may have read the clock before the advance. One timer
    // serves the whole bucket (BucketTimeoutTask): one run per look while any
    // vbucket has a write in flight.
    for (int round = 1; round <= 2; ++round) {
      bool armed = false;
      for (Vbid vb = 0; vb < kNeverEarlyVBuckets; ++vb) armed = armed || bucket_->inFlight(vb) > 0;
      const uint64_t runs =
          round == 1 ? before.timeout_task_runs : bucket_->stats().timeout_task_runs;
      if (round == 2) bucket_->checkTimeoutsNow();
      ASSERT_TRUE(
          eventually([&] { return bucket_->stats().timeout_task_runs >= runs + (armed ? 1 : 0); }));
    }
  }

  const Modes modes_;
  const clock::Duration resolution_;
  clock::ManualClock real_;
  CoarseView coarse_;
  executor::ExecutorPool pool_{2};
  config::Configuration config_{config::Scope::kBucket};
  std::unique_ptr<vbucket::VBucketMap> map_;
  std::unique_ptr<BucketDurability> bucket_;
  bool switched_ = false;
  std::mutex mutex_;
  std::map<std::string, clock::TimePoint> answered_at_;
};

std::string caseName(Modes modes, std::chrono::microseconds resolution) {
  static const char* const kNames[] = {"EventDriven", "Polling", "EventDrivenThenPolling",
                                       "PollingThenEventDriven"};
  return std::string(kNames[static_cast<int>(modes)]) + "_" + std::to_string(resolution.count()) +
         "us";
}

class NeverEarlyTest
    : public ::testing::TestWithParam<std::tuple<Modes, std::chrono::microseconds>> {};

INSTANTIATE_TEST_SUITE_P(ModesAndResolutions, NeverEarlyTest,
                         ::testing::Combine(::testing::Values(Modes::kEventDriven, Modes::kPolling,
                                                              Modes::kEventDrivenThenPolling,
                                                              Modes::kPollingThenEventDriven),
                                            ::testing::Values(1000us, 3000us, 4000us, 7000us)),
                         [](const auto& info) {
                           return caseName(std::get<0>(info.param), std::get<1>(info.param));
                         });

TEST_P(NeverEarlyTest, AnsweredOnlyOnceTheTimeoutHasElapsedInRealTime) {
  const auto [modes, resolution] = GetParam();
  NeverEarlyRun run(modes, resolution, /*stamp_with_coarse=*/false);
  const auto [head, behind] = run.go();
  ASSERT_NE(head, clock::Duration::max()) << "the head write was never answered";
  ASSERT_NE(behind, clock::Duration::max()) << "the write behind a head was never answered";
  EXPECT_GE(head, kTimeout) << "answered early at the head";
  EXPECT_GE(behind, kTimeout) << "answered early behind a head";
}

// What the test above guards against, shown: stamping the deadline with the
// coarse clock answers up to a step early (the 599 ms for 600 ms).
// 50 ms is not a multiple of 4 ms, so the coarse steps do not line up with
// the deadline: stamped 3.6 ms after a step, at coarse 0, a write is
// answered at coarse 52 ms, 48.4 ms after it was added. (Polling: each look
// is two passes over the vbuckets, so an answer is seen at the step it was
// decided, give or take one step.)
TEST(NeverEarlyTeeth, StampingWithTheCoarseClockIsEarly) {
  NeverEarlyRun run(Modes::kPolling, 4000us, /*stamp_with_coarse=*/true);
  const auto [head, behind] = run.go();
  EXPECT_LT(head, kTimeout);
  EXPECT_LT(behind, kTimeout);
}

}  // namespace
}  // namespace syncwrite::durability
