// dcp::ActiveStream feeding dcp::PassiveStream in one process, no wire: what
// the replica vbucket holds, when it acknowledges, and what the active's
// SyncWrites do with those acks. Also the PassiveDurabilityMonitor's rules.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "dcp/active_stream.h"
#include "dcp/passive_stream.h"
#include "durability/bucket_durability.h"
#include "durability/passive_durability_monitor.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::dcp {
namespace {

using durability::Level;
using durability::Requirements;
using durability::Timeout;
using durability::WriteOp;
using durability::WriteRequest;
using durability::WriteStatus;
using vbucket::VBucketState;

class DcpStreamTest : public ::testing::Test {
 protected:
  DcpStreamTest() {
    EXPECT_TRUE(config_.loadJson({{"max_vbuckets", 1}, {"bucket_type", "couchbase"}}).ok());
    active_map_ = std::make_unique<vbucket::VBucketMap>(config_, VBucketState::kActive);
    replica_map_ = std::make_unique<vbucket::VBucketMap>(config_, VBucketState::kReplica);
    active_ = std::make_unique<durability::BucketDurability>(
        "active", config_, *active_map_, pool_, durability::testing::chainOf({"replica"}),
        clock::ClockRef::of(clock_));
    replica_ = std::make_unique<durability::BucketDurability>(
        "replica", config_, *replica_map_, pool_, durability::testing::chainOf({}),
        clock::ClockRef::of(clock_));
    passive_ = std::make_unique<PassiveStream>(replica_map_->at(0), replica_->passiveMonitor(0));
  }
  ~DcpStreamTest() override {
    stream_.reset();
    passive_.reset();
    replica_.reset();
    active_.reset();
  }

  durability::WriteResult write(const std::string& key, const std::string& value,
                                Level level = Level::kMajority) {
    WriteRequest request{WriteOp::kSet, key, value, 7,
                         Requirements{level, Timeout::bucketDefault()}};
    return active_->write(0, request, recorder_.completion(key));
  }
  durability::WriteResult writePlain(const std::string& key, const std::string& value) {
    return active_->write(0, WriteRequest{WriteOp::kSet, key, value, 7, std::nullopt}, {});
  }

  void open(vbucket::Seqno start = 0) {
    ActiveStream::Opened opened =
        ActiveStream::open(active_map_->at(0), *active_, "replica-stream", start);
    ASSERT_FALSE(opened.rollback);
    stream_ = std::move(opened.stream);
  }

  // Moves everything the active stream has to the passive one; the HPS
  // acknowledged along the way (each one sent to the active), in order.
  std::vector<vbucket::Seqno> pump(size_t max_batches = SIZE_MAX) {
    std::vector<vbucket::Seqno> acks;
    for (size_t b = 0; b < max_batches; ++b) {
      ActiveStream::Batch batch = stream_->next(3);
      if (batch.items.empty()) break;
      EXPECT_TRUE(passive_->snapshotMarker(batch.marker).ok());
      for (const StreamItem& item : batch.items) {
        ReceivedItem received{.kind = item.kind,
                              .seqno = item.seqno,
                              .prepared_seqno = item.prepared_seqno,
                              .key = item.item->key(),
                              .value = item.item->value(),
                              .cas = item.item->cas,
                              .meta = item.item->meta,
                              .level = item.level,
                              .deleted = item.item->deleted};
        auto applied = passive_->item(received);
        EXPECT_TRUE(applied.ok()) << applied.status();
        if (applied.ok() && applied->has_value()) {
          acks.push_back(**applied);
          active_->seqnoAcknowledged(0, "replica", **applied);
        }
      }
    }
    return acks;
  }

  std::string replicaValue(const std::string& key) {
    vbucket::QueuedItem item = replica_map_->at(0).hashTable().find(key);
    return item ? std::string(item->value()) : "<absent>";
  }

  config::Configuration config_{config::Scope::kBucket};
  clock::ManualClock clock_;
  executor::ExecutorPool pool_{1};
  std::unique_ptr<vbucket::VBucketMap> active_map_;
  std::unique_ptr<vbucket::VBucketMap> replica_map_;
  std::unique_ptr<durability::BucketDurability> active_;
  std::unique_ptr<durability::BucketDurability> replica_;
  std::unique_ptr<PassiveStream> passive_;
  std::unique_ptr<ActiveStream> stream_;
  durability::testing::Recorder recorder_;
};

TEST_F(DcpStreamTest, ASyncWriteCommitsOnlyOnceTheReplicaAcknowledgedAWholeSnapshot) {
  open();
  ASSERT_EQ(writePlain("a", "1").status, WriteStatus::kCommitted);
  ASSERT_EQ(write("k", "v").status, WriteStatus::kPending);
  EXPECT_EQ(recorder_.size(), 0u);
  const std::vector<vbucket::Seqno> acks = pump(1);
  // The prepare (seqno 2) ends the first snapshot: acked once.
  EXPECT_EQ(acks, std::vector<vbucket::Seqno>({2}));
  ASSERT_TRUE(recorder_.waitFor(1));
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
  // The replica held the prepare but not the value until the commit arrives.
  EXPECT_EQ(replicaValue("k"), "<absent>");
  EXPECT_EQ(replicaValue("a"), "1");
  EXPECT_TRUE(pump().empty());  // the commit moves no HPS
  EXPECT_EQ(replicaValue("k"), "v");
  EXPECT_EQ(replica_map_->at(0).highSeqno(), active_map_->at(0).highSeqno());
  EXPECT_EQ(replica_->passiveMonitor(0).highCompletedSeqno(), 2u);
  EXPECT_EQ(replica_->passiveMonitor(0).numTracked(), 0u);
}

TEST_F(DcpStreamTest, PersistToMajorityIsAcknowledgedOnlyAfterTheReplicaPersisted) {
  open();
  ASSERT_EQ(write("k", "v", Level::kPersistToMajority).status, WriteStatus::kPending);
  active_->notifyLocalPersistence(0, active_map_->at(0).highSeqno());
  EXPECT_TRUE(pump().empty());  // received whole, not persisted: no ack
  EXPECT_EQ(recorder_.size(), 0u);
  std::vector<std::pair<vbucket::Vbid, vbucket::Seqno>> told;
  replica_->setPassiveAckListener(
      [&](vbucket::Vbid vb, vbucket::Seqno hps) { told.emplace_back(vb, hps); });
  replica_->notifyLocalPersistence(0, 1);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].second, 1u);
  active_->seqnoAcknowledged(0, "replica", told[0].second);
  ASSERT_TRUE(recorder_.waitFor(1));
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
}

TEST_F(DcpStreamTest, AStreamOpenedAfterExpelIsBackfilledWithValuesAndOpenPrepares) {
  ASSERT_EQ(writePlain("a", "1").status, WriteStatus::kCommitted);
  ASSERT_EQ(writePlain("a", "2").status, WriteStatus::kCommitted);
  ASSERT_EQ(writePlain("b", "1").status, WriteStatus::kCommitted);
  ASSERT_EQ(write("p", "pending").status, WriteStatus::kPending);
  // No cursor: everything counts as read, and expel frees it.
  active_map_->at(0).checkpointManager().createCheckpoint();
  active_map_->at(0).checkpointManager().extractItemsToExpel();
  open();
  ASSERT_EQ(writePlain("c", "1").status, WriteStatus::kCommitted);
  const std::vector<vbucket::Seqno> acks = pump();
  EXPECT_EQ(replicaValue("a"), "2");
  EXPECT_EQ(replicaValue("b"), "1");
  EXPECT_EQ(replicaValue("c"), "1");
  // The tracked prepare came with the backfill, and the ack commits it.
  ASSERT_FALSE(acks.empty());
  EXPECT_EQ(acks.front(), 4u);
  ASSERT_TRUE(recorder_.waitFor(1));
  EXPECT_TRUE(recorder_.entries()[0].resolution.committed);
  pump();
  EXPECT_EQ(replicaValue("p"), "pending");
}

TEST_F(DcpStreamTest, AResumedStreamPastWhatTheLogHoldsIsToldToRollBack) {
  ASSERT_EQ(writePlain("a", "1").status, WriteStatus::kCommitted);
  ASSERT_EQ(writePlain("a", "2").status, WriteStatus::kCommitted);
  active_map_->at(0).checkpointManager().createCheckpoint();
  active_map_->at(0).checkpointManager().extractItemsToExpel();
  ActiveStream::Opened opened = ActiveStream::open(active_map_->at(0), *active_, "s", 1);
  EXPECT_TRUE(opened.rollback);
  EXPECT_EQ(opened.rollback_seqno, 0u);
  EXPECT_FALSE(active_map_->at(0).checkpointManager().hasCursor("s"));
  // Beyond the high seqno: what the consumer holds, this vbucket never had.
  EXPECT_TRUE(ActiveStream::open(active_map_->at(0), *active_, "s", 9).rollback);
}

TEST_F(DcpStreamTest, OutOfOrderItemsAreRefusedAndChangeNothing) {
  using Item = ReceivedItem;
  EXPECT_FALSE(passive_->item(Item{.seqno = 1, .key = "k", .value = "v"}).ok());
  ASSERT_TRUE(passive_->snapshotMarker({.start = 1, .end = 2}).ok());
  EXPECT_FALSE(passive_->snapshotMarker({.start = 3, .end = 4}).ok());  // snapshot unfinished
  EXPECT_FALSE(passive_->item(Item{.seqno = 3, .key = "k", .value = "v"}).ok());  // past the end
  // A commit of a prepare the replica does not hold.
  EXPECT_FALSE(passive_
                   ->item(Item{.kind = StreamItemKind::kCommit,
                               .seqno = 1,
                               .prepared_seqno = 1,
                               .key = "k",
                               .value = ""})
                   .ok());
  // A prepare without a level.
  EXPECT_FALSE(
      passive_->item(Item{.kind = StreamItemKind::kPrepare, .seqno = 1, .key = "k", .value = "v"})
          .ok());
  EXPECT_EQ(replica_map_->at(0).highSeqno(), 0u);
  EXPECT_EQ(passive_->lastSeqno(), 0u);
  ASSERT_TRUE(passive_->item(Item{.seqno = 2, .key = "k", .value = "v"}).ok());
  EXPECT_EQ(replicaValue("k"), "v");
  EXPECT_FALSE(passive_->item(Item{.seqno = 2, .key = "k", .value = "w"}).ok());  // not above
  EXPECT_EQ(replicaValue("k"), "v");
}

TEST_F(DcpStreamTest, APromotionTakesOverOpenPreparesWithNoTimeoutUntilTheNewMajorityAcks) {
  open();
  ASSERT_EQ(write("done", "1").status, WriteStatus::kPending);
  ASSERT_EQ(write("open", "2").status, WriteStatus::kPending);
  // The replica receives both prepares and the first one's commit; the old
  // active is then gone (its commit of the second never comes).
  ActiveStream::Batch batch = stream_->next(2);
  ASSERT_TRUE(passive_->snapshotMarker(batch.marker).ok());
  for (const StreamItem& item : batch.items) {
    ASSERT_TRUE(passive_
                    ->item({.kind = item.kind,
                            .seqno = item.seqno,
                            .key = item.item->key(),
                            .value = item.item->value(),
                            .cas = item.item->cas,
                            .level = item.level})
                    .ok());
  }
  ASSERT_TRUE(passive_->snapshotMarker({.start = 3, .end = 3}).ok());
  ASSERT_TRUE(passive_
                  ->item({.kind = StreamItemKind::kCommit,
                          .seqno = 3,
                          .prepared_seqno = 1,
                          .key = "done",
                          .value = ""})
                  .ok());
  stream_.reset();
  auto topology = durability::ReplicationTopology::create(
      {durability::ReplicationChain{"new-active", {"other"}}});
  ASSERT_TRUE(topology.ok());
  EXPECT_FALSE(replica_->promote(0, "someone-else", *topology).ok());
  auto adopted = replica_->promote(0, "new-active", *topology);
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(*adopted, 1u);
  EXPECT_EQ(replica_map_->at(0).state(), VBucketState::kActive);
  EXPECT_TRUE(replica_->reCommitInProgress(0, "open"));
  EXPECT_FALSE(replica_->reCommitInProgress(0, "done"));
  EXPECT_EQ(replicaValue("done"), "1");
  // Hours later, it is still there: nothing times it out.
  clock_.advance(std::chrono::hours(5));
  replica_->checkTimeoutsNow();
  EXPECT_EQ(replica_->inFlight(0), 1u);
  EXPECT_EQ(replica_->nextDeadline(0), clock::kNever);
  // A write to its key waits for it.
  WriteRequest blocked{WriteOp::kSet, "open", "3", 9, std::nullopt};
  EXPECT_EQ(replica_->write(0, blocked, {}).status, WriteStatus::kSyncWriteInProgress);
  // The new chain's replica acknowledges it: it commits, once.
  ASSERT_TRUE(replica_->seqnoAcknowledged(0, "other", 2));
  EXPECT_FALSE(replica_->reCommitInProgress(0, "open"));
  EXPECT_EQ(replicaValue("open"), "2");
  EXPECT_EQ(replica_->stats().recommitted, 1u);
  EXPECT_EQ(replica_->inFlight(0), 0u);
  // Not a replica any more.
  EXPECT_EQ(replica_->promote(0, "new-active", *topology).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(DcpStreamTest, TheMonitorCompletesPreparesInSeqnoOrderOnly) {
  durability::PassiveDurabilityMonitor& pdm = replica_->passiveMonitor(0);
  ASSERT_TRUE(pdm.receivePrepare({.key = "x", .value = "1", .seqno = 1}).ok());
  ASSERT_TRUE(pdm.receivePrepare({.key = "y", .value = "2", .seqno = 2}).ok());
  EXPECT_FALSE(pdm.receiveCommit("y", 2, 3).ok());  // x is older and open
  EXPECT_FALSE(pdm.receiveCommit("z", 1, 3).ok());  // wrong key
  EXPECT_EQ(pdm.snapshotReceived(2), std::optional<vbucket::Seqno>(2));
  EXPECT_EQ(pdm.snapshotReceived(2), std::nullopt);  // did not move
  ASSERT_TRUE(pdm.receiveAbort("x", 1, 3).ok());
  ASSERT_TRUE(pdm.receiveCommit("y", 2, 4).ok());
  EXPECT_EQ(pdm.highCompletedSeqno(), 2u);
  EXPECT_EQ(pdm.numTracked(), 0u);
  EXPECT_EQ(replicaValue("x"), "<absent>");
  EXPECT_EQ(replicaValue("y"), "2");
}

TEST_F(DcpStreamTest, AResetReplicaHoldsNothingAndIsFilledAgainFromZero) {
  open();
  writePlain("old", "1");
  ASSERT_EQ(write("pending", "2", Level::kPersistToMajority).status, WriteStatus::kPending);
  pump();
  durability::PassiveDurabilityMonitor& pdm = replica_->passiveMonitor(0);
  ASSERT_EQ(pdm.numTracked(), 1u);
  ASSERT_EQ(replicaValue("old"), "1");
  // Only a replica rolls back.
  EXPECT_EQ(active_->resetReplica(0).status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<size_t> dropped = replica_->resetReplica(0);
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(*dropped, 1u);
  EXPECT_EQ(replicaValue("old"), "<absent>");
  EXPECT_EQ(replica_map_->at(0).highSeqno(), 0u);
  EXPECT_EQ(pdm.numTracked(), 0u);
  EXPECT_EQ(pdm.highPreparedSeqno(), 0u);
  // A persistence report read before the reset names seqnos the vbucket no
  // longer has: it moves nothing.
  EXPECT_EQ(pdm.notifyLocalPersistence(2), std::nullopt);
  EXPECT_EQ(pdm.persistedSeqno(), 0u);
  // A new stream from 0 fills it again, the prepare included.
  stream_.reset();
  passive_ = std::make_unique<PassiveStream>(replica_map_->at(0), pdm);
  open();
  pump();
  EXPECT_EQ(replicaValue("old"), "1");
  EXPECT_EQ(replica_map_->at(0).highSeqno(), 2u);
  EXPECT_EQ(pdm.numTracked(), 1u);
}

TEST_F(DcpStreamTest, APromotionWithoutATopologyHoldsItsPreparesAndRefusesSyncWritesUntilOneComes) {
  open();
  ASSERT_EQ(write("open", "1").status, WriteStatus::kPending);
  // The replica receives the prepare; the old active is then gone.
  ActiveStream::Batch batch = stream_->next(1);
  ASSERT_TRUE(passive_->snapshotMarker(batch.marker).ok());
  ASSERT_EQ(batch.items.size(), 1u);
  ASSERT_TRUE(passive_
                  ->item({.kind = batch.items[0].kind,
                          .seqno = batch.items[0].seqno,
                          .key = "open",
                          .value = "1",
                          .level = batch.items[0].level})
                  .ok());
  stream_.reset();
  auto adopted = replica_->promote(0, "new-active", std::nullopt);
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  EXPECT_EQ(*adopted, 1u);
  EXPECT_EQ(replica_map_->at(0).state(), VBucketState::kActive);
  EXPECT_TRUE(replica_->awaitingTopology(0));
  // Its prepare waits, although the chain it kept needs only its own ack.
  EXPECT_TRUE(replica_->reCommitInProgress(0, "open"));
  EXPECT_EQ(replicaValue("open"), "<absent>");
  // New SyncWrites are refused for now; plain writes are not.
  WriteRequest durable_write{WriteOp::kSet, "new", "2", 9,
                             Requirements{Level::kMajority, Timeout::bucketDefault()}};
  EXPECT_EQ(replica_->write(0, durable_write, recorder_.completion("new")).status,
            WriteStatus::kTemporaryFailure);
  EXPECT_EQ(
      replica_->write(0, WriteRequest{WriteOp::kSet, "plain", "3", 9, std::nullopt}, {}).status,
      WriteStatus::kCommitted);
  // An ack that arrives meanwhile is kept and counts once the chain is known.
  EXPECT_FALSE(replica_->seqnoAcknowledged(0, "other", 1));
  EXPECT_TRUE(replica_->reCommitInProgress(0, "open"));
  auto topology = durability::ReplicationTopology::create(
      {durability::ReplicationChain{"new-active", {"other"}}});
  ASSERT_TRUE(topology.ok());
  replica_->setTopology(0, *topology);
  EXPECT_FALSE(replica_->awaitingTopology(0));
  EXPECT_FALSE(replica_->reCommitInProgress(0, "open"));
  EXPECT_EQ(replicaValue("open"), "1");
  EXPECT_EQ(replica_->write(0, durable_write, recorder_.completion("new")).status,
            WriteStatus::kPending);
}

}  // namespace
}  // namespace syncwrite::dcp
