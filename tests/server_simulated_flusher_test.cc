// SimulatedFlusher's pace: after a run that flushed, it comes back after the
// plain interval while no SyncWrite awaits persistence, and a persist-level
// prepare queued meanwhile wakes it rather than waiting that long — but not
// out of flush_delay. The plain interval is an hour in most tests, so a
// prepare reported as persisted proves the wake-up, not the timer. Every
// assertion on time is a lower bound or a hang guard.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "executor/executor_pool.h"
#include "server/simulated_flusher.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::server {
namespace {

using namespace std::chrono_literals;
using durability::testing::eventually;
using vbucket::QueueOp;
using vbucket::Seqno;
using vbucket::Vbid;

class FlusherPace : public ::testing::Test {
 protected:
  explicit FlusherPace(std::chrono::milliseconds plain_interval = 1h)
      : flusher_(
            "flusher", map_, pool_,
            [this](Vbid vbid, Seqno seqno) {
              std::lock_guard<std::mutex> lock(mutex_);
              persisted_.emplace_back(vbid, seqno);
            },
            [this] { return awaited_.load(std::memory_order_seq_cst); }, plain_interval) {}

  std::vector<std::pair<Vbid, Seqno>> persisted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return persisted_;
  }

  // A plain write, flushed: the flusher is then on the plain pace. A short
  // pace may have ended (an idle run) before the test thread looks, so only
  // a long one is checked.
  void onThePlainPace(bool check_pace = true) {
    map_.at(Vbid{0}).checkpointManager().queue(QueueOp::kMutation, "plain", "v", 1);
    flusher_.markDirty(Vbid{0}, false);
    ASSERT_TRUE(eventually(
        [&] { return flusher_.batches() == 1 && (!check_pace || flusher_.plainPace()); }));
  }

  vbucket::VBucketMap map_{2, vbucket::VBucketState::kActive};
  executor::ExecutorPool pool_{1};
  std::atomic<bool> awaited_{false};
  std::mutex mutex_;
  std::vector<std::pair<Vbid, Seqno>> persisted_;
  SimulatedFlusher flusher_;  // last: its task reads the members above
};

TEST_F(FlusherPace, APersistLevelPrepareWakesAFlusherOnThePlainPace) {
  onThePlainPace();
  // Raised before the prepare is queued, as the monitor does.
  awaited_.store(true, std::memory_order_seq_cst);
  vbucket::QueuedPrepare prepare =
      map_.at(Vbid{1}).checkpointManager().queuePrepare("durable", "v", 1);
  flusher_.markDirty(Vbid{1}, true);
  const Seqno seqno = prepare->seqno;
  ASSERT_TRUE(eventually([&] { return !persisted().empty(); }))
      << "the prepare waited for the hour-long plain pace";
  EXPECT_EQ(persisted(), (std::vector<std::pair<Vbid, Seqno>>{{Vbid{1}, seqno}}));
  EXPECT_FALSE(flusher_.plainPace()) << "a write awaits persistence: the short pace";
}

TEST_F(FlusherPace, APrepareThatAwaitsNoPersistenceLeavesThePace) {
  onThePlainPace();
  map_.at(Vbid{1}).checkpointManager().queuePrepare("majority", "v", 1);
  flusher_.markDirty(Vbid{1}, true);
  // A wake-up would have run the flusher, which would have passed the
  // prepare: a second batch.
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(flusher_.batches(), 1u) << "nothing awaits persistence: no wake-up";
  EXPECT_TRUE(persisted().empty());
  EXPECT_TRUE(flusher_.plainPace());
}

// A pace short enough for its timer run to come during the test.
class FlusherShortPace : public FlusherPace {
 protected:
  FlusherShortPace() : FlusherPace(20ms) {}
};

TEST_F(FlusherShortPace, APersistLevelPrepareDoesNotCutFlushDelayShort) {
  onThePlainPace(/*check_pace=*/false);
  flusher_.setDelay(1h);
  // Marked while marks are held: no wake-up, and the plain pace's timer run
  // starts the delay (the case this test is for). After an idle run the
  // mark wakes the flusher, whose run starts the delay too. Either way no
  // run can flush for an hour.
  map_.at(Vbid{0}).checkpointManager().queue(QueueOp::kMutation, "plain2", "v", 1);
  flusher_.markDirty(Vbid{0}, false);
  std::this_thread::sleep_for(100ms);
  awaited_.store(true, std::memory_order_seq_cst);
  map_.at(Vbid{1}).checkpointManager().queuePrepare("durable", "v", 1);
  flusher_.markDirty(Vbid{1}, true);
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(persisted().empty()) << "the prepare's wake-up ended the hour-long flush_delay";
  EXPECT_EQ(flusher_.batches(), 1u);
}

}  // namespace
}  // namespace syncwrite::server
