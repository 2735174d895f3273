#include <gtest/gtest.h>

#include "durability/ack_state.h"

namespace syncwrite::durability {
namespace {

ReplicationTopology topology(const char* json) {
  auto t = ReplicationTopology::fromJson(nlohmann::json::parse(json));
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

TEST(AckState, ActiveAloneSatisfiesMajorityButNotPersistence) {
  AckState acks(ReplicationTopology("active"));
  EXPECT_TRUE(acks.isSatisfied(1, Level::kMajority));
  EXPECT_FALSE(acks.isSatisfied(1, Level::kMajorityAndPersistOnMaster));
  acks.localPersistence(1);
  EXPECT_TRUE(acks.isSatisfied(1, Level::kMajorityAndPersistOnMaster));
  EXPECT_TRUE(acks.isSatisfied(1, Level::kPersistToMajority));
  EXPECT_FALSE(acks.isSatisfied(2, Level::kPersistToMajority));
}

TEST(AckState, OneReplicaMustAckForAChainOfTwo) {
  AckState acks(topology(R"([["active", "r1"]])"));
  EXPECT_FALSE(acks.isSatisfied(1, Level::kMajority));
  EXPECT_TRUE(acks.seqnoAck("r1", 3));
  // Cumulative: seqnos 1..3 are acknowledged, 4 is not.
  EXPECT_TRUE(acks.isSatisfied(1, Level::kMajority));
  EXPECT_TRUE(acks.isSatisfied(3, Level::kMajority));
  EXPECT_FALSE(acks.isSatisfied(4, Level::kMajority));
}

TEST(AckState, MajorityOfThreeNeedsOneOfTwoReplicas) {
  AckState acks(topology(R"([["active", "r1", "r2"]])"));
  EXPECT_FALSE(acks.isSatisfied(5, Level::kMajority));
  acks.seqnoAck("r2", 5);
  EXPECT_TRUE(acks.isSatisfied(5, Level::kMajority));
}

TEST(AckState, MajorityOfFourNeedsTwoReplicas) {
  AckState acks(topology(R"([["active", "r1", "r2", "r3"]])"));
  acks.seqnoAck("r1", 5);
  EXPECT_FALSE(acks.isSatisfied(5, Level::kMajority));
  acks.seqnoAck("r3", 5);
  EXPECT_TRUE(acks.isSatisfied(5, Level::kMajority));
}

TEST(AckState, EveryChainMustBeSatisfied) {
  AckState acks(topology(R"([["active", "r1"], ["active", "r2"]])"));
  acks.seqnoAck("r1", 1);
  EXPECT_FALSE(acks.isSatisfied(1, Level::kMajority));
  acks.seqnoAck("r2", 1);
  EXPECT_TRUE(acks.isSatisfied(1, Level::kMajority));
}

TEST(AckState, PersistLevelsNeedTheActivesPersistenceToo) {
  AckState acks(topology(R"([["active", "r1"]])"));
  acks.seqnoAck("r1", 1);
  EXPECT_TRUE(acks.isSatisfied(1, Level::kMajority));
  EXPECT_FALSE(acks.isSatisfied(1, Level::kMajorityAndPersistOnMaster));
  EXPECT_FALSE(acks.isSatisfied(1, Level::kPersistToMajority));
  acks.localPersistence(1);
  EXPECT_TRUE(acks.isSatisfied(1, Level::kMajorityAndPersistOnMaster));
  EXPECT_TRUE(acks.isSatisfied(1, Level::kPersistToMajority));
}

TEST(AckState, AcksNeverGoBackwards) {
  AckState acks(topology(R"([["active", "r1"]])"));
  acks.seqnoAck("r1", 10);
  acks.seqnoAck("r1", 4);
  EXPECT_EQ(acks.ackedSeqno("r1"), 10u);
  acks.localPersistence(7);
  acks.localPersistence(2);
  EXPECT_EQ(acks.persistedSeqno(), 7u);
}

TEST(AckState, UnknownNodesAreRefused) {
  AckState acks(topology(R"([["active", "r1", null]])"));
  EXPECT_FALSE(acks.seqnoAck("stranger", 1));
  EXPECT_FALSE(acks.seqnoAck("", 1));
  EXPECT_FALSE(acks.seqnoAck("active", 1));  // the active acks through persistence, not DCP
  EXPECT_EQ(acks.ackedSeqno("stranger"), 0u);
}

// A replica added by a rebalance may ack before the topology that adds it
// arrives; it acks again only when new prepares reach it. Its ack is kept and
// counts once the topology names it (kv_engine's queuedSeqnoAcks), where it
// used to be dropped and its writes left to time out.
TEST(AckState, AnAckFromOutsideTheTopologyCountsOnceTheTopologyAddsTheNode) {
  AckState acks(topology(R"([["active", "r1"]])"));
  EXPECT_FALSE(acks.seqnoAck("r2", 4));
  EXPECT_FALSE(acks.seqnoAck("r2", 3));  // never backwards
  EXPECT_TRUE(acks.seqnoAck("r1", 4));
  acks.setTopology(topology(R"([["active", "r1"], ["active", "r2"]])"));
  EXPECT_EQ(acks.ackedSeqno("r2"), 4u);
  EXPECT_TRUE(acks.isSatisfied(4, Level::kMajority));
  // Applied once: a topology without r2 and then with it again starts r2 afresh.
  acks.setTopology(topology(R"([["active", "r1"]])"));
  acks.setTopology(topology(R"([["active", "r1"], ["active", "r2"]])"));
  EXPECT_EQ(acks.ackedSeqno("r2"), 0u);
}

TEST(AckState, AForgottenAckFromOutsideTheTopologyDoesNotCount) {
  AckState acks(topology(R"([["active", "r1"]])"));
  EXPECT_FALSE(acks.seqnoAck("r2", 4));
  EXPECT_FALSE(acks.seqnoAck("r3", 4));
  acks.forgetQueuedAck("r2");  // r2's stream closed
  acks.setTopology(topology(R"([["active", "r1", "r2", "r3"]])"));
  EXPECT_EQ(acks.ackedSeqno("r2"), 0u);
  EXPECT_EQ(acks.ackedSeqno("r3"), 4u);
}

TEST(AckState, AcksFromOutsideTheTopologyAreKeptForAtMostABoundedNumberOfNodes) {
  AckState acks(topology(R"([["active", "r1"]])"));
  for (size_t i = 0; i <= AckState::kMaxQueuedAcks; ++i) {
    EXPECT_FALSE(acks.seqnoAck("n" + std::to_string(i), 7));
  }
  const std::string last = "n" + std::to_string(AckState::kMaxQueuedAcks);
  const std::string json = R"([["active", "n0", ")" + last + R"("]])";
  acks.setTopology(topology(json.c_str()));
  EXPECT_EQ(acks.ackedSeqno("n0"), 7u);
  EXPECT_EQ(acks.ackedSeqno(last), 0u) << "kept past kMaxQueuedAcks nodes";
}

TEST(AckState, TopologyChangeKeepsAcksOfNodesThatStay) {
  AckState acks(topology(R"([["active", "r1"]])"));
  acks.seqnoAck("r1", 5);
  acks.setTopology(topology(R"([["active", "r1"], ["active", "r2"]])"));
  EXPECT_EQ(acks.ackedSeqno("r1"), 5u);
  EXPECT_EQ(acks.ackedSeqno("r2"), 0u);
  EXPECT_FALSE(acks.isSatisfied(5, Level::kMajority));
  acks.seqnoAck("r2", 5);
  EXPECT_TRUE(acks.isSatisfied(5, Level::kMajority));
  acks.setTopology(topology(R"([["active", "r2"]])"));
  EXPECT_EQ(acks.ackedSeqno("r1"), 0u);
  EXPECT_TRUE(acks.isSatisfied(5, Level::kMajority));
}

}  // namespace
}  // namespace syncwrite::durability
