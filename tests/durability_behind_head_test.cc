// A write answered at its own deadline while an older write with a later
// deadline heads its vbucket (issue 16): the monitor on its own, a manual
// clock, the caller notifying as BucketDurability does.
#include <chrono>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "durability/active_durability_monitor.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using testing::Recorder;
using vbucket::QueueOp;
using vbucket::VBucketState;

class BehindHeadTest : public ::testing::Test {
 protected:
  WriteResult write(const std::string& key, uint16_t timeout_ms) {
    ResolvedWrites resolved;
    WriteResult r = monitor_.write(
        WriteRequest{WriteOp::kSet, key, "v", 1,
                     Requirements{Level::kMajority, *Timeout::fromMillis(timeout_ms)}},
        recorder_.completion(key), clock_.now(), resolved);
    resolved.notify();
    return r;
  }
  void ack(Seqno seqno) {
    ResolvedWrites resolved;
    monitor_.seqnoAckReceived("replica1", seqno, resolved);
    resolved.notify();
  }
  void timeouts() {
    ResolvedWrites resolved;
    monitor_.processTimeout(clock_.now(), resolved);
    resolved.notify();
  }
  std::vector<std::pair<QueueOp, std::string>> resolutionsQueued() {
    std::vector<std::pair<QueueOp, std::string>> out;
    for (const auto& op : testing::queuedOps(vb_.checkpointManager())) {
      if (op.first != QueueOp::kPrepare) out.push_back(op);
    }
    return out;
  }

  clock::ManualClock clock_;
  DurabilitySettings settings_;
  vbucket::VBucket vb_{0, VBucketState::kActive};
  ActiveDurabilityMonitor monitor_{vb_, settings_, testing::chainOf({"replica1"})};
  Recorder recorder_;
};

TEST_F(BehindHeadTest, AnsweredAtItsDeadlineThenCommittedInOrderWithoutASecondCall) {
  write("head", 30000);
  const WriteResult shorter = write("short", 100);
  clock_.advance(100ms);
  timeouts();
  EXPECT_EQ(recorder_.size(), 0u) << "answered before its deadline had passed";
  clock_.advance(1ns);
  timeouts();
  ASSERT_EQ(recorder_.size(), 1u);
  const Resolution answer = recorder_.entries()[0].resolution;
  EXPECT_EQ(recorder_.entries()[0].tag, "short");
  EXPECT_FALSE(answer.committed);
  EXPECT_EQ(answer.reason, AmbiguousReason::kTimeout);
  EXPECT_EQ(answer.resolution_seqno, 0u) << "nothing queued yet";
  EXPECT_EQ(monitor_.numTracked(), 2u) << "the prepare stays tracked";
  EXPECT_EQ(write("short", 100).status, WriteStatus::kSyncWriteInProgress) << "its key stays busy";
  EXPECT_TRUE(resolutionsQueued().empty());

  ack(shorter.seqno);  // satisfies both: they commit in seqno order
  EXPECT_EQ(recorder_.size(), 2u) << "the head answered; the short write not again";
  EXPECT_EQ(recorder_.entries()[1].tag, "head");
  EXPECT_TRUE(recorder_.entries()[1].resolution.committed);
  EXPECT_EQ(resolutionsQueued(), (std::vector<std::pair<QueueOp, std::string>>{
                                     {QueueOp::kCommit, "head"}, {QueueOp::kCommit, "short"}}));
  const MonitorCounters c = monitor_.counters();
  EXPECT_EQ(c.answered_behind_head, 1u);
  EXPECT_EQ(c.committed, 2u);
  EXPECT_EQ(c.committed_after_answer, 1u);
  EXPECT_EQ(c.in_flight, 0u);
  EXPECT_EQ(write("short", 100).status, WriteStatus::kPending) << "the key is free again";
}

TEST_F(BehindHeadTest, AnsweredAtItsDeadlineThenAbortedInOrderWithoutASecondCall) {
  write("head", 30000);
  write("short", 100);
  clock_.advance(101ms);
  timeouts();
  ASSERT_EQ(recorder_.size(), 1u);
  clock_.advance(30s);
  timeouts();
  ASSERT_EQ(recorder_.size(), 2u);
  EXPECT_EQ(recorder_.entries()[1].tag, "head");
  EXPECT_EQ(resolutionsQueued(), (std::vector<std::pair<QueueOp, std::string>>{
                                     {QueueOp::kAbort, "head"}, {QueueOp::kAbort, "short"}}));
  const MonitorCounters c = monitor_.counters();
  EXPECT_EQ(c.answered_behind_head, 1u);
  EXPECT_EQ(c.aborted_timeout, 2u);
  EXPECT_EQ(c.committed_after_answer, 0u);
}

// processTimeout's bound counts aborts and answers behind the head together;
// what is left stays due (the next deadline is still past) for the next call.
TEST_F(BehindHeadTest, ABoundedCallLeavesTheRestDueInOrder) {
  write("a1", 100);
  write("a2", 100);
  write("a3", 100);
  write("head", 30000);
  write("b1", 100);
  write("b2", 200);
  clock_.advance(201ms);
  const clock::TimePoint now = clock_.now();
  const auto call = [&] {
    ResolvedWrites resolved;
    monitor_.processTimeout(now, resolved, 2);
    const size_t n = resolved.size();
    resolved.notify();
    return n;
  };
  EXPECT_EQ(call(), 2u);
  EXPECT_LT(monitor_.nextDeadline(), now) << "a3 is still due";
  EXPECT_EQ(call(), 2u);  // a3 aborted, b1 answered
  EXPECT_LT(monitor_.nextDeadline(), now) << "b2 is still due";
  EXPECT_EQ(call(), 1u);  // b2 answered
  EXPECT_GT(monitor_.nextDeadline(), now) << "only the head's 30 s deadline is left";
  EXPECT_EQ(call(), 0u);
  // A bound of 0 is taken as 1: a caller that passes it still makes progress.
  clock_.advance(30s);
  {
    ResolvedWrites resolved;
    monitor_.processTimeout(clock_.now(), resolved, 0);
    EXPECT_EQ(resolved.size(), 1u);
    resolved.notify();
  }
  std::vector<std::string> order;
  for (const auto& e : recorder_.entries()) order.push_back(e.tag);
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "a2", "a3", "b1", "b2", "head"}));
  EXPECT_EQ(resolutionsQueued(),
            (std::vector<std::pair<QueueOp, std::string>>{{QueueOp::kAbort, "a1"},
                                                          {QueueOp::kAbort, "a2"},
                                                          {QueueOp::kAbort, "a3"},
                                                          {QueueOp::kAbort, "head"}}));
  EXPECT_EQ(monitor_.numTracked(), 2u) << "b1 and b2, answered already, are left to abort";
}

TEST_F(BehindHeadTest, LeavingActiveDoesNotAnswerItAgain) {
  write("head", 30000);
  write("short", 100);
  clock_.advance(101ms);
  timeouts();
  ResolvedWrites resolved;
  monitor_.abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
  resolved.notify();
  ASSERT_EQ(recorder_.size(), 2u);
  EXPECT_EQ(recorder_.entries()[1].tag, "head");
  EXPECT_EQ(recorder_.entries()[1].resolution.reason, AmbiguousReason::kLeftActive);
  EXPECT_EQ(monitor_.counters().ambiguous_other, 1u);
}

TEST_F(BehindHeadTest, WritesWithEqualTimeoutsNeverWaitBehindTheHead) {
  // Deadlines in seqno order: the head always expires first, so no write
  // needs the heap and the next deadline is the head's.
  for (int i = 0; i < 5; ++i) {
    write("k" + std::to_string(i), 100);
    clock_.advance(1ms);
  }
  EXPECT_EQ(monitor_.nextDeadline(), monitor_.headDeadline());
  clock_.advance(100ms);  // k0..k4 expired at 100..104 ms after their writes
  timeouts();
  EXPECT_EQ(recorder_.size(), 5u);
  EXPECT_EQ(monitor_.counters().answered_behind_head, 0u);
}

// Against a model, with random timeouts, acks and time steps: after each
// processTimeout(now) every write whose deadline < now, or that committed, has
// been answered exactly once; none was answered before its deadline; and
// the checkpoint resolves prepares in seqno order.
TEST_F(BehindHeadTest, EveryWriteIsAnsweredAtItsDeadlineOnceAgainstAModel) {
  std::mt19937 rng(16);
  struct Model {
    clock::TimePoint deadline;
    Seqno seqno;
  };
  std::map<std::string, Model> writes;
  const auto start = clock_.now();
  int next_key = 0;
  for (int step = 0; step < 3000; ++step) {
    const unsigned what = rng() % 10;
    if (what < 5) {
      const std::string key = "k" + std::to_string(next_key++);
      const auto timeout = static_cast<uint16_t>(1 + rng() % 200);
      const WriteResult r = write(key, timeout);
      ASSERT_EQ(r.status, WriteStatus::kPending);
      writes[key] = Model{clock_.now() + std::chrono::milliseconds(timeout), r.seqno};
    } else if (what < 6) {
      const Seqno high = vb_.highSeqno();
      ack(high > 3 ? high - rng() % 4 : high);
    } else {
      clock_.advance(std::chrono::microseconds(rng() % 5000));
      timeouts();
    }
    const auto now = clock_.now();
    std::map<std::string, int> answered;
    for (const auto& e : recorder_.entries()) {
      ++answered[e.tag];
      if (!e.resolution.committed) {
        ASSERT_LT(writes[e.tag].deadline, now) << e.tag << " answered ambiguous early";
      }
    }
    if (what >= 6) {  // just looked: every expired write has its answer
      for (const auto& [key, w] : writes) {
        if (w.deadline < now) {
          ASSERT_EQ(answered[key], 1) << key << " at step " << step;
        }
      }
    }
    for (const auto& [key, n] : answered) ASSERT_EQ(n, 1) << key << " answered twice";
  }
  EXPECT_GT(monitor_.counters().answered_behind_head, 0u) << "the model never exercised it";
  Seqno last = 0;
  for (const vbucket::LogRecord& record : [&] {
         vb_.checkpointManager().registerCursor("model");
         return vb_.checkpointManager().readItems("model");
       }()) {
    if (record.op == QueueOp::kPrepare) continue;
    EXPECT_GT(record.item->seqno, last) << "resolved out of seqno order";
    last = record.item->seqno;
  }
  (void)start;
}

// The memory claim of the heap (active_durability_monitor.h): entries of
// writes that left are dropped, so the heap stays O(writes tracked) however
// many writes have come and gone behind a head.
TEST_F(BehindHeadTest, WritesThatLeftDoNotLeaveTheHeapGrowing) {
  write("head", 60000);
  for (int round = 0; round < 1000; ++round) {
    const WriteResult r = write("w" + std::to_string(round), 30000);  // behind a later head
    write("head" + std::to_string(round), 60000);
    ack(r.seqno);  // commits the older head and the write; the new head stays
    ASSERT_EQ(monitor_.numTracked(), 1u);
    ASSERT_LE(monitor_.heapEntries(), 2 * 1u + 16) << "round " << round;
  }
  EXPECT_EQ(monitor_.nextDeadline(), monitor_.headDeadline());
}

}  // namespace
}  // namespace syncwrite::durability
