// A randomised stress test of BucketDurability: several threads add writes,
// acknowledge, persist, advance the manual clock, switch the timeout mode and
// change vbucket states, all at once. Afterwards:
//  - every accepted SyncWrite was resolved exactly once;
//  - in each vbucket's checkpoint, commits and aborts resolve prepares in
//    increasing seqno order;
//  - the checkpoints agree with the completions (one commit per committed
//    write, one abort per timeout).
// Fixed seeds and a bounded size, so that it runs in CI under TSan.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "durability/bucket_durability.h"
#include "tests/durability_test_support.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using vbucket::QueueOp;
using vbucket::VBucketState;

constexpr size_t kStressVBuckets = 8;
constexpr int kWriters = 3;
constexpr int kWritesPerWriter = 1500;

TEST(DurabilityStressTest, EveryWriteResolvesOnceAndInSeqnoOrder) {
  clock::ManualClock clock;
  executor::ExecutorPool pool(2);
  config::Configuration config(config::Scope::kBucket);
  ASSERT_TRUE(config
                  .loadJson({{"max_vbuckets", kStressVBuckets},
                             {"bucket_type", "couchbase"},
                             {"durability_timeout_task_interval", 1}})
                  .ok());
  vbucket::VBucketMap map(config, VBucketState::kActive);
  for (size_t vb = 0; vb < kStressVBuckets; ++vb) {
    map.at(static_cast<Vbid>(vb)).checkpointManager().registerCursor("stress");
  }

  std::mutex results_mutex;
  std::map<uint64_t, int> calls;  // write id -> completions
  std::map<uint64_t, Resolution> resolutions;
  std::atomic<uint64_t> accepted{0};

  auto bucket = std::make_unique<BucketDurability>("stress", config, map, pool,
                                                   testing::chainOf({"replica1", "replica2"}),
                                                   clock::ClockRef::of(clock));

  std::atomic<bool> stop{false};
  // Writers wait for the other threads to keep up, so that every kind of
  // event interleaves with the writes however the threads are scheduled.
  std::atomic<uint64_t> ack_rounds{0}, clock_rounds{0};
  auto keepPace = [&](int i) {
    const uint64_t due = static_cast<uint64_t>(i) / 4;
    while (!stop.load() && (ack_rounds.load() < due || clock_rounds.load() < due / 4)) {
      std::this_thread::yield();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(1000 + w);
      for (int i = 0; i < kWritesPerWriter; ++i) {
        keepPace(i);
        const uint64_t id = static_cast<uint64_t>(w) * kWritesPerWriter + i;
        const auto vb = static_cast<Vbid>(rng() % kStressVBuckets);
        const Level level = rng() % 4 == 0 ? Level::kPersistToMajority : Level::kMajority;
        const std::string key = "key" + std::to_string(rng() % 64);
        WriteRequest request{WriteOp::kSet, key, "v", id,
                             Requirements{level, *Timeout::fromMillis(1 + rng() % 40)}};
        const WriteResult r = bucket->write(vb, request, [&, id](const Resolution& res) {
          std::lock_guard lock(results_mutex);
          ++calls[id];
          resolutions[id] = res;
        });
        if (r.status == WriteStatus::kPending) accepted.fetch_add(1);
      }
    });
  }
  threads.emplace_back([&] {  // replicas acknowledge, the active persists
    std::mt19937 rng(7);
    while (!stop.load()) {
      const auto vb = static_cast<Vbid>(rng() % kStressVBuckets);
      const Seqno high = map.at(vb).highSeqno();
      const Seqno upto = high == 0 ? 0 : high - rng() % 3;
      bucket->seqnoAcknowledged(vb, rng() % 2 ? "replica1" : "replica2", upto);
      if (rng() % 3 == 0) bucket->notifyLocalPersistence(vb, upto);
      ack_rounds.fetch_add(1);
    }
  });
  threads.emplace_back([&] {  // time passes, timeouts are looked for
    while (!stop.load()) {
      clock.advance(1ms);
      bucket->checkTimeoutsNow();
      clock_rounds.fetch_add(1);
      std::this_thread::yield();
    }
  });
  threads.emplace_back([&] {  // the mode flips, vbuckets change state
    std::mt19937 rng(11);
    int round = 0;
    while (!stop.load()) {
      if (round++ % 4 == 0) {
        const bool polling = bucket->mode() == TimeoutMode::kPolling;
        EXPECT_TRUE(
            config.setFromText("durability_timeout_mode", polling ? "event-driven" : "polling")
                .ok());
      }
      vbucket::VBucket& vb = map.at(static_cast<Vbid>(rng() % kStressVBuckets));
      vb.setState(VBucketState::kReplica);
      std::this_thread::yield();
      vb.setState(VBucketState::kActive);
    }
  });

  for (int w = 0; w < kWriters; ++w) threads[w].join();
  stop.store(true);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();

  // Whatever the scheduling, end with one write that commits and one that
  // times out, each behind whatever its vbucket still holds, so that both
  // outcomes are exercised in every run.
  auto record = [&](uint64_t id) {
    return [&, id](const Resolution& res) {
      std::lock_guard lock(results_mutex);
      ++calls[id];
      resolutions[id] = res;
    };
  };
  constexpr uint64_t kCommitId = 1'000'000, kTimeoutId = 1'000'001;
  const WriteResult to_commit =
      bucket->write(0, WriteRequest{WriteOp::kSet, "final-commit", "v", kCommitId, Requirements{}},
                    record(kCommitId));
  ASSERT_EQ(to_commit.status, WriteStatus::kPending);
  accepted.fetch_add(1);
  bucket->notifyLocalPersistence(0, to_commit.seqno);
  bucket->seqnoAcknowledged(0, "replica1", to_commit.seqno);
  const WriteResult to_time_out =
      bucket->write(1,
                    WriteRequest{WriteOp::kSet, "final-timeout", "v", kTimeoutId,
                                 Requirements{Level::kMajority, *Timeout::fromMillis(1)}},
                    record(kTimeoutId));
  ASSERT_EQ(to_time_out.status, WriteStatus::kPending);
  accepted.fetch_add(1);

  // Let what is left time out through the current mode, then delete the
  // bucket: whatever is still in flight is answered then.
  clock.advance(1s);
  bucket->checkTimeoutsNow();
  ASSERT_TRUE(testing::eventually([&] {
    std::lock_guard lock(results_mutex);
    return calls.count(kTimeoutId) == 1;
  }));
  // What the checkpoints hold is counted by the layer; answers are what the
  // completions saw (a write answered at its deadline behind the head may
  // still commit or abort later, once).
  // Shut down first: it waits for a timeout task still running, so no abort
  // is queued after the counters are read.
  bucket->shutdown(AmbiguousReason::kBucketDeleted);
  const DurabilityStats stats = bucket->stats();
  bucket.reset();

  std::lock_guard lock(results_mutex);
  EXPECT_EQ(calls.size(), accepted.load()) << "every accepted write resolved";
  uint64_t committed = 0, timed_out = 0;
  for (const auto& [id, n] : calls) {
    EXPECT_EQ(n, 1) << "write " << id << " resolved " << n << " times";
    const Resolution& r = resolutions[id];
    if (r.committed) ++committed;
    if (!r.committed && r.reason == AmbiguousReason::kTimeout) ++timed_out;
  }
  EXPECT_GT(committed, 0u);
  EXPECT_GT(timed_out, 0u) << "final-timeout: committed " << resolutions[kTimeoutId].committed
                           << " reason " << toString(resolutions[kTimeoutId].reason);

  uint64_t commits = 0, aborts = 0;
  for (size_t v = 0; v < kStressVBuckets; ++v) {
    vbucket::CheckpointManager& cm = map.at(static_cast<Vbid>(v)).checkpointManager();
    std::map<std::string, Seqno> open_prepare;  // key -> its prepare not yet resolved
    Seqno last_resolved = 0;
    for (const vbucket::LogRecord& record : cm.readItems("stress")) {
      const vbucket::Item& item = *record.item;
      if (record.op == QueueOp::kPrepare) {
        auto [it, added] = open_prepare.emplace(std::string(item.key()), record.seqno);
        EXPECT_TRUE(added) << "a second prepare of " << item.key() << " in flight, vb " << v
                           << " (the first at " << it->second << ")";
        it->second = record.seqno;
      } else if (record.op == QueueOp::kCommit || record.op == QueueOp::kAbort) {
        auto it = open_prepare.find(std::string(item.key()));
        ASSERT_NE(it, open_prepare.end()) << "resolution of no prepare, vb " << v;
        EXPECT_EQ(item.seqno, it->second) << "resolution of another prepare, vb " << v;
        EXPECT_GT(record.seqno, it->second) << "resolved before prepared, vb " << v;
        EXPECT_GT(it->second, last_resolved) << "out of seqno order in vb " << v;
        last_resolved = it->second;
        open_prepare.erase(it);
        (record.op == QueueOp::kCommit ? commits : aborts) += 1;
      }
    }
  }
  EXPECT_EQ(commits, stats.committed);
  EXPECT_EQ(commits, committed + stats.committed_after_answer)
      << "a write answered ambiguous and then committed was not answered twice";
  EXPECT_EQ(aborts, stats.aborted_timeout + stats.aborted_other);
  EXPECT_LE(stats.aborted_timeout, timed_out) << "every timeout abort follows an ambiguous answer";
}

}  // namespace
}  // namespace syncwrite::durability
