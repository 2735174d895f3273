// ActiveDurabilityMonitor on its own: no executor, a manual clock, the caller
// notifying resolutions as BucketDurability does.
#include "durability/active_durability_monitor.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket.h"

namespace syncwrite::durability {
namespace {

using namespace std::chrono_literals;
using testing::Recorder;
using vbucket::QueueOp;
using vbucket::VBucketState;

class MonitorTest : public ::testing::Test {
 protected:
  explicit MonitorTest(ReplicationTopology topology = testing::chainOf({"replica1"}))
      : monitor_(vb_, settings_, std::move(topology)) {}

  WriteResult write(const std::string& key, Level level = Level::kMajority,
                    Timeout timeout = Timeout::bucketDefault(), WriteOp op = WriteOp::kSet) {
    WriteRequest request{op, key, "value", 7, Requirements{level, timeout}};
    return writeRequest(request);
  }
  WriteResult writePlain(const std::string& key, WriteOp op = WriteOp::kSet) {
    return writeRequest(WriteRequest{op, key, "plain", 3, std::nullopt});
  }
  WriteResult writeRequest(WriteRequest request) {
    ResolvedWrites resolved;
    const std::string tag(request.key);
    WriteResult result = monitor_.write(request, recorder_.completion(tag), clock_.now(), resolved);
    resolved.notify();
    return result;
  }
  void ack(Seqno seqno, const std::string& node = "replica1") {
    ResolvedWrites resolved;
    monitor_.seqnoAckReceived(node, seqno, resolved);
    resolved.notify();
  }
  void persist(Seqno seqno) {
    ResolvedWrites resolved;
    monitor_.notifyLocalPersistence(seqno, resolved);
    resolved.notify();
  }
  void timeouts() {
    ResolvedWrites resolved;
    monitor_.processTimeout(clock_.now(), resolved);
    resolved.notify();
  }
  std::vector<std::string> resolvedTags() const {
    std::vector<std::string> tags;
    for (const auto& e : recorder_.entries()) tags.push_back(e.tag);
    return tags;
  }

  clock::ManualClock clock_;
  DurabilitySettings settings_;
  vbucket::VBucket vb_{0, VBucketState::kActive};
  ActiveDurabilityMonitor monitor_;
  Recorder recorder_;
};

TEST_F(MonitorTest, MajorityWriteCommitsOnTheReplicasAck) {
  const WriteResult r = write("k");
  ASSERT_EQ(r.status, WriteStatus::kPending);
  EXPECT_EQ(r.seqno, 1u);
  EXPECT_TRUE(monitor_.hasSyncWrites());
  EXPECT_EQ(vb_.hashTable().find("k"), nullptr) << "a prepare is not visible";

  ack(1);
  ASSERT_EQ(recorder_.size(), 1u);
  const Resolution res = recorder_.entries()[0].resolution;
  EXPECT_TRUE(res.committed);
  EXPECT_EQ(res.prepare_seqno, 1u);
  EXPECT_EQ(res.resolution_seqno, 2u);
  EXPECT_EQ(res.cas, 7u);
  ASSERT_NE(vb_.hashTable().find("k"), nullptr);
  EXPECT_EQ(vb_.hashTable().find("k")->value(), "value");
  EXPECT_FALSE(monitor_.hasSyncWrites());
  EXPECT_EQ(monitor_.headDeadline(), clock::kNever);
  const auto ops = testing::queuedOps(vb_.checkpointManager());
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].first, QueueOp::kPrepare);
  EXPECT_EQ(ops[1].first, QueueOp::kCommit);
}

TEST_F(MonitorTest, AnAckBelowThePrepareCommitsNothing) {
  write("a");
  write("b");
  ack(1);
  EXPECT_EQ(resolvedTags(), std::vector<std::string>{"a"});
  ack(2);
  EXPECT_EQ(resolvedTags(), (std::vector<std::string>{"a", "b"}));
}

// A replica acks the prepares it holds: an ack naming a seqno the vbucket has
// not reached covers only what exists, not the prepares queued later (as
// kv_engine's active monitor advances a node only over tracked writes).
TEST_F(MonitorTest, AnAckBeyondTheHighSeqnoCoversNoLaterPrepare) {
  write("a");  // seqno 1
  ack(100);
  EXPECT_EQ(resolvedTags(), std::vector<std::string>{"a"});
  EXPECT_EQ(monitor_.ackedSeqno("replica1"), 1u) << "held to the high seqno when it came";
  const WriteResult b = write("b");  // seqno 3, after a's commit
  ASSERT_EQ(b.status, WriteStatus::kPending);
  EXPECT_EQ(resolvedTags(), std::vector<std::string>{"a"}) << "b was never acknowledged";
  ack(b.seqno);
  EXPECT_EQ(resolvedTags(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(MonitorTest, AnAckFromANodeOutsideTheTopologyIsRefused) {
  write("k");
  ResolvedWrites resolved;
  EXPECT_FALSE(monitor_.seqnoAckReceived("stranger", 1, resolved));
  EXPECT_TRUE(resolved.empty());
  EXPECT_EQ(monitor_.numTracked(), 1u);
}

TEST_F(MonitorTest, MajorityAndPersistOnMasterWaitsForLocalPersistence) {
  write("k", Level::kMajorityAndPersistOnMaster);
  ack(1);
  EXPECT_EQ(recorder_.size(), 0u);
  persist(1);
  ASSERT_EQ(recorder_.size(), 1u);
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
}

TEST_F(MonitorTest, PersistToMajorityWaitsForLocalPersistenceToo) {
  write("k", Level::kPersistToMajority);
  persist(1);
  EXPECT_EQ(recorder_.size(), 0u) << "the replica has not acked its persisted prepare";
  ack(1);
  EXPECT_EQ(recorder_.size(), 1u);
}

// While no tracked write needs persistence here, a persistence report is
// dropped without the lock: a later write has a higher seqno, so only a later
// report can satisfy it. The bucket's count of writes awaiting persistence
// rises with such a write and falls when it leaves, by a commit or an
// abortAll; a write that needs no persistence leaves it alone.
TEST_F(MonitorTest, APersistenceReportWhileNoWriteNeedsItSatisfiesOnlyLaterReports) {
  auto awaiting = [this] { return settings_.awaiting_persistence.load(); };
  const Seqno m = write("m").seqno;  // majority: needs no persistence
  EXPECT_EQ(awaiting(), 0u);
  persist(m);
  ack(m);
  ASSERT_EQ(resolvedTags(), std::vector<std::string>{"m"});
  const Seqno p = write("p", Level::kMajorityAndPersistOnMaster).seqno;
  EXPECT_EQ(awaiting(), 1u);
  ack(p);
  persist(p - 1);
  EXPECT_EQ(recorder_.size(), 1u) << "persisted up to " << p - 1 << " does not cover " << p;
  persist(p);
  ASSERT_EQ(resolvedTags(), (std::vector<std::string>{"m", "p"}));
  EXPECT_EQ(awaiting(), 0u) << "the commit took it off";
  write("q", Level::kPersistToMajority);
  write("q2");
  EXPECT_EQ(awaiting(), 1u);
  ResolvedWrites aborted;
  monitor_.abortAll(AmbiguousReason::kLeftActive, /*close=*/false, aborted);
  aborted.notify();
  ASSERT_EQ(recorder_.size(), 4u);
  EXPECT_EQ(awaiting(), 0u) << "abortAll took it off";
  const Seqno r = write("r", Level::kPersistToMajority).seqno;
  ack(r);
  EXPECT_EQ(recorder_.size(), 4u);
  persist(r);
  ASSERT_EQ(recorder_.size(), 5u);
  EXPECT_TRUE(recorder_.entries()[4].resolution.committed);
}

// A batch kept for reuse keeps its block, but not one a storm grew past the
// bound; a batch still holding writes is left alone.
TEST(ResolvedWritesTest, ShrinkIfAboveFreesOnlyAnEmptyOutsizedBlock) {
  int called = 0;
  ResolvedWrites batch;
  for (int i = 0; i < 2000; ++i) batch.add([&called](const Resolution&) { ++called; }, {});
  batch.shrinkIfAbove(1024);
  EXPECT_EQ(batch.size(), 2000u) << "not while it holds writes";
  batch.notify();
  EXPECT_EQ(called, 2000);
  EXPECT_GE(batch.capacity(), 2000u) << "notify() keeps the block";
  batch.shrinkIfAbove(4096);
  EXPECT_GE(batch.capacity(), 2000u) << "within the bound: kept";
  batch.shrinkIfAbove(1024);
  EXPECT_LE(batch.capacity(), 1024u);
  batch.add([&called](const Resolution&) { ++called; }, {});
  batch.notify();
  EXPECT_EQ(called, 2001) << "still usable";
}

TEST_F(MonitorTest, SatisfiedWritesCommitInSeqnoOrder) {
  write("slow", Level::kPersistToMajority);
  write("fast", Level::kMajority);
  ack(2);  // satisfies "fast" and, but for persistence, "slow"
  EXPECT_EQ(recorder_.size(), 0u) << "a satisfied write waits behind an unsatisfied one";
  persist(2);
  EXPECT_EQ(resolvedTags(), (std::vector<std::string>{"slow", "fast"}));
}

TEST_F(MonitorTest, TimeoutAbortsOnlyOnceTheDeadlineIsStrictlyPast) {
  write("k", Level::kMajority, *Timeout::fromMillis(100));
  EXPECT_EQ(monitor_.headDeadline(), clock_.now() + 100ms);
  clock_.advance(100ms);
  timeouts();
  EXPECT_EQ(recorder_.size(), 0u) << "deadline == now is not expired";
  clock_.advance(1ns);
  timeouts();
  ASSERT_EQ(recorder_.size(), 1u);
  const Resolution res = recorder_.entries()[0].resolution;
  EXPECT_FALSE(res.committed);
  EXPECT_EQ(res.reason, AmbiguousReason::kTimeout);
  EXPECT_EQ(res.resolution_seqno, 2u);
  const auto ops = testing::queuedOps(vb_.checkpointManager());
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].first, QueueOp::kAbort);
  EXPECT_EQ(vb_.hashTable().find("k"), nullptr);
}

// Aborts in seqno order: a write expired behind an unexpired one is answered
// at its deadline (durability_behind_head_test.cc), but its abort waits.
TEST_F(MonitorTest, TimeoutAbortsTheExpiredPrefixOnly) {
  write("long", Level::kMajority, *Timeout::fromMillis(300));
  write("short", Level::kMajority, *Timeout::fromMillis(50));
  write("mid", Level::kMajority, *Timeout::fromMillis(200));
  clock_.advance(100ms);
  timeouts();
  EXPECT_EQ(resolvedTags(), std::vector<std::string>{"short"}) << "answered at its deadline";
  EXPECT_EQ(monitor_.numTracked(), 3u) << "but still tracked: its abort waits";
  clock_.advance(201ms);  // 301 ms: "long" expired, and with it the prefix behind it
  timeouts();
  EXPECT_EQ(resolvedTags(), (std::vector<std::string>{"short", "long", "mid"}));
  const auto ops = testing::queuedOps(vb_.checkpointManager());
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_EQ(ops[3], std::make_pair(QueueOp::kAbort, std::string("long")));
  EXPECT_EQ(ops[4], std::make_pair(QueueOp::kAbort, std::string("short")));
  EXPECT_EQ(ops[5], std::make_pair(QueueOp::kAbort, std::string("mid")));
}

TEST_F(MonitorTest, TimeoutStopsAtTheFirstUnexpiredWrite) {
  write("a", Level::kMajority, *Timeout::fromMillis(10));
  write("b", Level::kMajority, *Timeout::fromMillis(1000));
  write("c", Level::kMajority, *Timeout::fromMillis(10));
  clock_.advance(20ms);
  timeouts();
  EXPECT_EQ(resolvedTags(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(monitor_.numTracked(), 2u) << "c, answered, stays behind b";
  EXPECT_EQ(monitor_.headDeadline(), clock_.now() - 20ms + 1000ms);
  EXPECT_EQ(monitor_.nextDeadline(), monitor_.headDeadline()) << "c needs no timer any more";
}

TEST_F(MonitorTest, BucketDefaultTimeoutIsReadWhenTheWriteIsAdded) {
  settings_.default_timeout_ms.store(40);
  write("k");
  settings_.default_timeout_ms.store(5000);
  EXPECT_EQ(monitor_.headDeadline(), clock_.now() + 40ms);
}

TEST_F(MonitorTest, InfiniteTimeoutNeverExpires) {
  write("k", Level::kMajority, Timeout::infinite());
  clock_.advance(std::chrono::hours(24 * 365));
  timeouts();
  EXPECT_EQ(recorder_.size(), 0u);
  EXPECT_EQ(monitor_.headDeadline(), clock::kNever);
  EXPECT_TRUE(monitor_.hasSyncWrites());
}

TEST_F(MonitorTest, LevelNoneInARequirementIsAnInvalidLevel) {
  EXPECT_EQ(write("k", Level::kNone).status, WriteStatus::kInvalidLevel);
  EXPECT_EQ(write("k", static_cast<Level>(9)).status, WriteStatus::kInvalidLevel);
  EXPECT_EQ(vb_.highSeqno(), 0u) << "a refused write queues nothing";
}

TEST_F(MonitorTest, ASecondWriteToAKeyInFlightIsRefused) {
  ASSERT_EQ(write("k").status, WriteStatus::kPending);
  EXPECT_EQ(write("k").status, WriteStatus::kSyncWriteInProgress);
  EXPECT_EQ(writePlain("k").status, WriteStatus::kSyncWriteInProgress);
  EXPECT_EQ(write("other").status, WriteStatus::kPending);
  ack(3);
  EXPECT_EQ(write("k").status, WriteStatus::kPending) << "free again once resolved";
}

TEST_F(MonitorTest, AddReplaceAndDeleteCheckTheCommittedValue) {
  EXPECT_EQ(write("k", Level::kMajority, Timeout::bucketDefault(), WriteOp::kReplace).status,
            WriteStatus::kKeyNotFound);
  EXPECT_EQ(writePlain("k", WriteOp::kDelete).status, WriteStatus::kKeyNotFound);
  EXPECT_EQ(writePlain("k", WriteOp::kAdd).status, WriteStatus::kCommitted);
  EXPECT_EQ(writePlain("k", WriteOp::kAdd).status, WriteStatus::kKeyExists);
  EXPECT_EQ(write("k", Level::kMajority, Timeout::bucketDefault(), WriteOp::kDelete).status,
            WriteStatus::kPending);
  ack(vb_.highSeqno());
  ASSERT_EQ(recorder_.size(), 1u);
  EXPECT_EQ(vb_.hashTable().find("k"), nullptr) << "a committed delete removes the key";
}

TEST_F(MonitorTest, WritesToAVBucketThatIsNotActiveAreRefused) {
  vb_.setState(VBucketState::kReplica);
  EXPECT_EQ(write("k").status, WriteStatus::kNotActive);
  EXPECT_EQ(writePlain("k").status, WriteStatus::kNotActive);
  ResolvedWrites resolved;
  EXPECT_FALSE(monitor_.seqnoAckReceived("replica1", 1, resolved));
}

// The state changes before the vbucket's listener calls abortAll(), which
// waits for the monitor's lock (ActiveDurabilityMonitor::resolvesLocked). A
// persisted seqno or a timeout run that takes the lock in between resolves
// nothing: they used to commit (answered Success) or abort (kTimeout) into
// the log of a vbucket that was no longer active, and abortAll() then found
// nothing left to answer kLeftActive. This fixture has no listener, so the
// test calls abortAll() itself, as the listener would.
TEST_F(MonitorTest, AVBucketThatLeftActiveResolvesNothingBeforeAbortAll) {
  ASSERT_EQ(write("persisted", Level::kMajorityAndPersistOnMaster).status, WriteStatus::kPending);
  ASSERT_EQ(write("expiring", Level::kMajority, *Timeout::fromMillis(100)).status,
            WriteStatus::kPending);
  ack(2);  // both acknowledged; "persisted" still needs the active's persistence
  EXPECT_EQ(recorder_.size(), 0u);
  vb_.setState(VBucketState::kReplica);
  persist(2);
  clock_.advance(101ms);
  timeouts();
  EXPECT_EQ(recorder_.size(), 0u) << "resolved after the vbucket left active";
  EXPECT_EQ(testing::queuedOps(vb_.checkpointManager()).size(), 2u) << "only the two prepares";
  ResolvedWrites resolved;
  monitor_.abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
  resolved.notify();
  ASSERT_EQ(resolvedTags(), (std::vector<std::string>{"persisted", "expiring"}));
  for (const auto& e : recorder_.entries()) {
    EXPECT_FALSE(e.resolution.committed) << e.tag;
    EXPECT_EQ(e.resolution.reason, AmbiguousReason::kLeftActive) << e.tag;
  }
}

TEST_F(MonitorTest, MinLevelMakesAPlainWriteASyncWrite) {
  EXPECT_EQ(writePlain("before").status, WriteStatus::kCommitted);
  settings_.min_level.store(Level::kMajority);
  EXPECT_EQ(writePlain("after").status, WriteStatus::kPending);
  settings_.min_level.store(Level::kMajorityAndPersistOnMaster);
  ASSERT_EQ(write("raised", Level::kMajority).status, WriteStatus::kPending);
  ack(3);
  EXPECT_EQ(resolvedTags(), std::vector<std::string>{"after"}) << "'raised' needs persistence now";
  persist(3);
  EXPECT_EQ(resolvedTags(), (std::vector<std::string>{"after", "raised"}));
}

TEST_F(MonitorTest, AbortAllAnswersAmbiguousAndQueuesAnAbortForEachInOrder) {
  write("a");
  write("b");
  ResolvedWrites resolved;
  monitor_.abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
  EXPECT_EQ(recorder_.size(), 0u) << "nothing is called before notify()";
  resolved.notify();
  ASSERT_EQ(recorder_.size(), 2u);
  Seqno abort_seqno = 3;  // after the prepares at 1 and 2, in their order
  for (const auto& e : recorder_.entries()) {
    EXPECT_FALSE(e.resolution.committed);
    EXPECT_EQ(e.resolution.reason, AmbiguousReason::kLeftActive);
    EXPECT_EQ(e.resolution.resolution_seqno, abort_seqno++);
  }
  EXPECT_EQ(vb_.highSeqno(), 4u);
  EXPECT_EQ(monitor_.counters().aborted_other, 2u);
  EXPECT_FALSE(monitor_.hasSyncWrites());
  EXPECT_EQ(write("a").status, WriteStatus::kPending) << "not closed: still accepts";
}

// The key set holds each write's position in the deque, which shifts as the
// head leaves and restarts when abortAll() empties it.
TEST_F(MonitorTest, KeysStayBusyExactlyWhileTheirWritesAreTracked) {
  for (const char* key : {"a", "b", "c"}) ASSERT_EQ(write(key).status, WriteStatus::kPending);
  ack(1);  // commits "a"
  EXPECT_EQ(writePlain("a").status, WriteStatus::kCommitted) << "its write left";
  for (const char* key : {"b", "c"}) {
    EXPECT_EQ(writePlain(key).status, WriteStatus::kSyncWriteInProgress) << key;
  }
  ASSERT_EQ(write("a").status, WriteStatus::kPending);
  EXPECT_EQ(write("a").status, WriteStatus::kSyncWriteInProgress);
  ack(2);  // commits "b"
  EXPECT_EQ(write("b").status, WriteStatus::kPending);
  for (const char* key : {"c", "a", "b"}) {
    EXPECT_EQ(write(key).status, WriteStatus::kSyncWriteInProgress) << key;
  }
  ResolvedWrites resolved;
  monitor_.abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
  resolved.notify();
  for (const char* key : {"c", "b"}) ASSERT_EQ(write(key).status, WriteStatus::kPending) << key;
  EXPECT_EQ(write("c").status, WriteStatus::kSyncWriteInProgress);
  EXPECT_EQ(write("b").status, WriteStatus::kSyncWriteInProgress);
  EXPECT_EQ(writePlain("a").status, WriteStatus::kCommitted);
}

TEST_F(MonitorTest, AClosedMonitorRefusesEveryWrite) {
  ResolvedWrites resolved;
  monitor_.abortAll(AmbiguousReason::kShutdown, /*close=*/true, resolved);
  EXPECT_EQ(write("a").status, WriteStatus::kNotActive);
  EXPECT_EQ(writePlain("b").status, WriteStatus::kNotActive);
}

TEST_F(MonitorTest, CountersFollowTheWrites) {
  write("a");
  write("b", Level::kMajority, *Timeout::fromMillis(5));
  writePlain("c");
  write("a");  // refused
  ack(1);
  clock_.advance(10ms);
  timeouts();
  const MonitorCounters c = monitor_.counters();
  EXPECT_EQ(c.committed, 1u);
  EXPECT_EQ(c.aborted_timeout, 1u);
  EXPECT_EQ(c.plain_writes, 1u);
  EXPECT_EQ(c.refused, 1u);
  EXPECT_EQ(c.in_flight, 0u);
}

TEST_F(MonitorTest, CountersByLevelAndByCause) {
  const auto at = [](Level l) { return static_cast<size_t>(l); };
  write("m");                                             // seqno 1, commits
  write("p", Level::kMajorityAndPersistOnMaster);         // 2, commits
  write("t", Level::kMajority, *Timeout::fromMillis(5));  // 3, times out
  write("l", Level::kPersistToMajority);                  // 4, left active
  ack(2);
  persist(2);
  clock_.advance(10ms);
  timeouts();
  ResolvedWrites resolved;
  monitor_.abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
  resolved.notify();
  const MonitorCounters c = monitor_.counters();
  EXPECT_EQ(c.accepted_by_level[at(Level::kMajority)], 2u);
  EXPECT_EQ(c.accepted_by_level[at(Level::kMajorityAndPersistOnMaster)], 1u);
  EXPECT_EQ(c.accepted_by_level[at(Level::kPersistToMajority)], 1u);
  EXPECT_EQ(c.committed_by_level[at(Level::kMajority)], 1u);
  EXPECT_EQ(c.committed_by_level[at(Level::kMajorityAndPersistOnMaster)], 1u);
  EXPECT_EQ(c.committed_by_level[at(Level::kPersistToMajority)], 0u);
  EXPECT_EQ(c.aborted_by_level[at(Level::kMajority)], 1u);
  EXPECT_EQ(c.aborted_by_level[at(Level::kPersistToMajority)], 1u);
  EXPECT_EQ(c.ambiguous_by_reason[static_cast<size_t>(AmbiguousReason::kTimeout)], 1u);
  EXPECT_EQ(c.ambiguous_by_reason[static_cast<size_t>(AmbiguousReason::kLeftActive)], 1u);
  EXPECT_EQ(c.accepted_by_level[at(Level::kNone)], 0u);
  // Each commit with a client was timed, from the prepare's CAS (7 here).
  EXPECT_EQ(settings_.commit_latency.snapshot(Level::kMajority).count(), 1u);
  EXPECT_EQ(settings_.commit_latency.snapshot(Level::kMajorityAndPersistOnMaster).count(), 1u);
}

TEST_F(MonitorTest, EachReplicaHoldsBackTheWritesAboveItsAck) {
  using Unacked = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(monitor_.unackedByReplica(), (Unacked{{"replica1", 0}}));
  write("a", Level::kPersistToMajority);  // stays: nothing persists here
  write("b", Level::kPersistToMajority);
  write("c", Level::kPersistToMajority);
  EXPECT_EQ(monitor_.unackedByReplica(), (Unacked{{"replica1", 3}}));
  ack(2);
  EXPECT_EQ(monitor_.unackedByReplica(), (Unacked{{"replica1", 1}}));
  ack(3);
  EXPECT_EQ(monitor_.unackedByReplica(), (Unacked{{"replica1", 0}}));
}

// A listener that records what it is told.
class RecordingListener final : public DeadlineListener {
 public:
  void nextDeadlineEarlier(clock::TimePoint d) override { told.push_back(d); }
  std::vector<clock::TimePoint> told;
};

TEST_F(MonitorTest, TheListenerIsToldOnlyOfEarlierNextDeadlines) {
  RecordingListener listener;
  monitor_.setDeadlineListener(&listener);
  EXPECT_TRUE(listener.told.empty()) << "nothing to tell while empty";

  const auto t0 = clock_.now();
  write("a", Level::kMajority, *Timeout::fromMillis(100));
  ASSERT_EQ(listener.told.size(), 1u);
  EXPECT_EQ(listener.told[0], t0 + 100ms);
  write("b", Level::kMajority, *Timeout::fromMillis(50));  // earlier, behind the head
  ASSERT_EQ(listener.told.size(), 2u);
  EXPECT_EQ(listener.told[1], t0 + 50ms);
  write("c", Level::kMajority, *Timeout::fromMillis(200));  // later: not told
  EXPECT_EQ(listener.told.size(), 2u);
  ack(1);  // "a" commits; the next deadline is still b's
  EXPECT_EQ(monitor_.nextDeadline(), t0 + 50ms);
  timeouts();  // nothing expired
  clock_.advance(60ms);
  timeouts();  // b answered: the next deadline is later, c's
  EXPECT_EQ(monitor_.nextDeadline(), t0 + 200ms);
  clock_.advance(200ms);
  timeouts();
  EXPECT_EQ(monitor_.nextDeadline(), clock::kNever);
  EXPECT_EQ(listener.told.size(), 2u) << "later deadlines are never told";

  write("d", Level::kMajority, *Timeout::fromMillis(100));
  EXPECT_EQ(listener.told.size(), 3u) << "the first write of an empty monitor is";
  monitor_.setDeadlineListener(nullptr);
  write("e", Level::kMajority, *Timeout::fromMillis(10));
  EXPECT_EQ(listener.told.size(), 3u) << "a detached listener is not told";
  monitor_.setDeadlineListener(&listener);
  ASSERT_EQ(listener.told.size(), 4u) << "told the current one on attach";
  EXPECT_EQ(listener.told.back(), monitor_.nextDeadline());
}

class NoReplicaMonitorTest : public MonitorTest {
 protected:
  NoReplicaMonitorTest() : MonitorTest(testing::chainOf({})) {}
};

TEST_F(NoReplicaMonitorTest, AWriteSatisfiedOnAddIsLeftForTheCallerToNotify) {
  ResolvedWrites resolved;
  const WriteResult r = monitor_.write(WriteRequest{WriteOp::kSet, "k", "v", 1, Requirements{}},
                                       recorder_.completion("k"), clock_.now(), resolved);
  EXPECT_EQ(r.status, WriteStatus::kPending);
  EXPECT_EQ(recorder_.size(), 0u) << "never called from inside the call that added it";
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_NE(vb_.hashTable().find("k"), nullptr) << "committed already";
  resolved.notify();
  EXPECT_EQ(recorder_.size(), 1u);
}

class ImpossibleMonitorTest : public MonitorTest {
 protected:
  ImpossibleMonitorTest() : MonitorTest(testing::chainOf({"", ""})) {}
};

TEST_F(ImpossibleMonitorTest, DurabilityImpossibleIsRefusedButPlainWritesAreNot) {
  EXPECT_EQ(write("k").status, WriteStatus::kDurabilityImpossible);
  EXPECT_EQ(writePlain("k").status, WriteStatus::kCommitted);
  ResolvedWrites resolved;
  monitor_.setTopology(testing::chainOf({"replica1", ""}), resolved);
  EXPECT_EQ(write("k2").status, WriteStatus::kPending) << "possible once a replica is placed";
}

}  // namespace
}  // namespace syncwrite::durability
