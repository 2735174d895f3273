// The log a replica reads: after every way a SyncWrite ends (commit, timeout,
// flush, the vbucket leaving active and coming back, a write answered at its
// deadline behind the head), a cursor that read the vbucket's log from the
// start sees each prepare followed by exactly one commit or abort of it, and
// never two prepares of one key in flight at once — what a kv_engine replica
// requires of a memory snapshot. Also: the committed value carries its
// commit's seqno, not its prepare's.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "durability/bucket_durability.h"
#include "tests/durability_test_support.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using testing::Recorder;
using vbucket::QueueOp;
using vbucket::VBucketState;

constexpr Vbid kVb = 0;
const char* const kCursor = "replica-stream";

// Returns, for each problem found, one line naming it (empty: well-formed).
std::vector<std::string> problemsOf(const std::vector<vbucket::LogRecord>& log) {
  std::vector<std::string> problems;
  std::map<Seqno, std::string> in_flight;  // prepare's seqno → its key, until resolved
  auto inFlightFor = [&](const std::string& key) {
    for (const auto& [seqno, k] : in_flight) {
      if (k == key) return seqno;
    }
    return Seqno{0};
  };
  for (const vbucket::LogRecord& r : log) {
    const std::string key(r.item->key());
    const std::string at = " at seqno " + std::to_string(r.seqno) + " (key " + key + ")";
    const Seqno open = inFlightFor(key);
    switch (r.op) {
      case QueueOp::kPrepare:
        if (open != 0) {
          problems.push_back("a second prepare in flight" + at + ", the first at " +
                             std::to_string(open));
        }
        in_flight[r.seqno] = key;
        break;
      case QueueOp::kCommit:
      case QueueOp::kAbort:
        if (in_flight.erase(r.item->seqno) == 0) {
          problems.push_back(std::string(vbucket::toString(r.op)) + " of no prepare in flight" +
                             at);
        }
        break;
      case QueueOp::kMutation:
        if (open != 0) problems.push_back("a mutation over a prepare in flight" + at);
        break;
    }
  }
  for (const auto& [seqno, key] : in_flight) {
    problems.push_back("prepare at seqno " + std::to_string(seqno) + " (key " + key +
                       ") never resolved");
  }
  return problems;
}

class DurabilityLogTest : public ::testing::Test {
 protected:
  DurabilityLogTest() {
    EXPECT_TRUE(config_.loadJson({{"max_vbuckets", 2}}).ok());
    map_ = std::make_unique<vbucket::VBucketMap>(config_, VBucketState::kActive);
    EXPECT_TRUE(map_->at(kVb).checkpointManager().registerCursor(kCursor));
    bucket_ = std::make_unique<BucketDurability>(
        "test", config_, *map_, pool_, testing::chainOf({"replica1"}), clock::ClockRef::of(clock_));
  }
  ~DurabilityLogTest() override { bucket_.reset(); }

  WriteResult write(const std::string& key, std::optional<Timeout> timeout = std::nullopt) {
    WriteRequest request{WriteOp::kSet, key, "v", 1,
                         Requirements{Level::kMajority, timeout.value_or(Timeout::infinite())}};
    return bucket_->write(kVb, request, recorder_.completion(key));
  }
  WriteResult writePlain(const std::string& key) {
    return bucket_->write(kVb, WriteRequest{WriteOp::kSet, key, "v", 1, std::nullopt}, {});
  }
  void ack(Seqno seqno) { ASSERT_TRUE(bucket_->seqnoAcknowledged(kVb, "replica1", seqno)); }
  // Moves time past `d` and waits until every pending write that expired is answered.
  void expire(std::chrono::milliseconds d, size_t answers) {
    clock_.advance(d);
    bucket_->checkTimeoutsNow();
    ASSERT_TRUE(recorder_.waitFor(answers));
  }
  // Everything queued since the last call.
  std::vector<vbucket::LogRecord> read() {
    return map_->at(kVb).checkpointManager().readItems(kCursor);
  }
  void expectWellFormed() {
    std::vector<vbucket::LogRecord> records = read();
    log_.insert(log_.end(), records.begin(), records.end());
    for (const std::string& p : problemsOf(log_)) ADD_FAILURE() << p;
  }
  Resolution answerOf(const std::string& key) {
    for (const auto& e : recorder_.entries()) {
      if (e.tag == key) return e.resolution;
    }
    ADD_FAILURE() << key << " was not answered";
    return {};
  }

  clock::ManualClock clock_;
  executor::ExecutorPool pool_{2};
  config::Configuration config_{config::Scope::kBucket};
  std::unique_ptr<vbucket::VBucketMap> map_;
  Recorder recorder_;
  std::unique_ptr<BucketDurability> bucket_;
  std::vector<vbucket::LogRecord> log_;
};

TEST(DurabilityLogCheck, FindsWhatAReplicaWouldRefuse) {
  vbucket::CheckpointManager log;
  ASSERT_TRUE(log.registerCursor("c"));
  vbucket::QueuedPrepare first = log.queuePrepare("k", "v", 1);
  vbucket::QueuedPrepare second = log.queuePrepare("k", "v", 1);
  log.queueResolution(QueueOp::kAbort, second);
  const std::vector<std::string> problems = problemsOf(log.readItems("c"));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], "a second prepare in flight at seqno 2 (key k), the first at 1");
  EXPECT_EQ(problems[1], "prepare at seqno 1 (key k) never resolved");
}

TEST_F(DurabilityLogTest, CommitAndTimeoutResolveEachPrepareOnce) {
  ASSERT_EQ(write("a").seqno, 1u);
  ack(1);
  ASSERT_TRUE(recorder_.waitFor(1));
  ASSERT_EQ(write("b", Timeout::fromMillis(10)).status, WriteStatus::kPending);
  expire(11ms, 2);
  EXPECT_EQ(answerOf("b").reason, AmbiguousReason::kTimeout);
  expectWellFormed();
  EXPECT_EQ(map_->at(kVb).highSeqno(), 4u);
}

// The review's case: FLUSH with a SyncWrite in flight, then the same key again.
TEST_F(DurabilityLogTest, FlushQueuesAnAbortForEveryWriteInFlight) {
  ASSERT_EQ(writePlain("committed").status, WriteStatus::kCommitted);
  ASSERT_EQ(write("k").seqno, 2u);
  EXPECT_EQ(bucket_->flush(), 1u) << "the committed key is deleted";
  ASSERT_TRUE(recorder_.waitFor(1));
  const Resolution flushed = answerOf("k");
  EXPECT_EQ(flushed.reason, AmbiguousReason::kFlushed);
  EXPECT_EQ(flushed.resolution_seqno, 3u) << "the abort follows the prepare";

  ASSERT_EQ(write("k", Timeout::fromMillis(10)).status, WriteStatus::kPending);
  expire(11ms, 2);
  expectWellFormed();
}

TEST_F(DurabilityLogTest, LeavingActiveAndComingBackLeavesNoPrepareBehind) {
  ASSERT_EQ(write("k").status, WriteStatus::kPending);
  ASSERT_EQ(write("j").status, WriteStatus::kPending);
  map_->at(kVb).setState(VBucketState::kReplica);
  ASSERT_EQ(recorder_.size(), 2u);
  EXPECT_EQ(answerOf("k").reason, AmbiguousReason::kLeftActive);
  EXPECT_EQ(answerOf("k").resolution_seqno, 3u);
  EXPECT_EQ(answerOf("j").resolution_seqno, 4u);
  map_->at(kVb).setState(VBucketState::kActive);

  const WriteResult again = write("k");
  ASSERT_EQ(again.status, WriteStatus::kPending);
  ack(again.seqno);
  ASSERT_TRUE(recorder_.waitFor(3));
  EXPECT_TRUE(recorder_.entries()[2].resolution.committed);
  expectWellFormed();
}

// A write answered at its deadline while an older one heads the vbucket stays
// tracked; a flush then aborts both in order and answers only the older.
TEST_F(DurabilityLogTest, AWriteAnsweredBehindTheHeadIsAbortedOnceAndNotAnsweredTwice) {
  ASSERT_EQ(write("head", Timeout::fromMillis(1000)).status, WriteStatus::kPending);
  ASSERT_EQ(write("behind", Timeout::fromMillis(10)).status, WriteStatus::kPending);
  expire(11ms, 1);
  EXPECT_EQ(answerOf("behind").resolution_seqno, 0u) << "answered, not yet aborted";
  bucket_->flush();
  ASSERT_TRUE(recorder_.waitFor(2));
  EXPECT_EQ(recorder_.size(), 2u);
  EXPECT_EQ(answerOf("head").reason, AmbiguousReason::kFlushed);
  expectWellFormed();
  EXPECT_EQ(map_->at(kVb).highSeqno(), 4u) << "one abort each";
}

// kv_engine's committed item carries the commit's seqno; the mutation answer
// reports the same.
TEST_F(DurabilityLogTest, TheCommittedValueCarriesItsCommitsSeqno) {
  ASSERT_EQ(writePlain("other").seqno, 1u);
  ASSERT_EQ(write("k").seqno, 2u);
  ASSERT_EQ(writePlain("later").seqno, 3u);
  ack(2);
  ASSERT_TRUE(recorder_.waitFor(1));
  const Resolution r = answerOf("k");
  ASSERT_TRUE(r.committed);
  EXPECT_EQ(r.resolution_seqno, 4u);
  const vbucket::QueuedItem visible = map_->at(kVb).hashTable().find("k");
  ASSERT_NE(visible, nullptr);
  EXPECT_EQ(vbucket::committedSeqno(*visible), 4u);
  EXPECT_EQ(visible->seqno, 2u) << "the log's prepare keeps its own seqno";
  EXPECT_EQ(vbucket::committedSeqno(*map_->at(kVb).hashTable().find("other")), 1u);
  expectWellFormed();
}

}  // namespace
}  // namespace syncwrite::durability
