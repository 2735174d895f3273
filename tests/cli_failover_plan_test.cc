// syncwrite-cli failover's plan: which replica it promotes, the chains it
// sets and who is told, from what the surviving nodes report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/cli/failover_plan.h"

namespace syncwrite::server::cli {
namespace {

using protocol::VbucketState;
using ::testing::HasSubstr;

VbucketReport report(std::string state, uint64_t hps, uint64_t high, std::string topology) {
  return {std::move(state), high, hps, std::move(topology)};
}

// The changes for vbucket `vb`, as "node:state:topology".
std::vector<std::string> changesOf(const FailoverPlan& plan, uint16_t vb) {
  std::vector<std::string> out;
  for (const VbucketChange& c : plan.changes) {
    if (c.vbucket != vb) continue;
    out.push_back(c.node + ":" + std::string(protocol::toString(c.state)) + ":" + c.topology);
  }
  return out;
}

TEST(FailoverPlanTest, PromotesTheReplicaWithTheHighestPreparedSeqnoThenHighSeqno) {
  const std::string chain = R"([["n1","n2","n3"]])";
  ClusterReports reports;
  // n3 has acked more prepares, n2 holds more items: the prepares win.
  reports["n2"][0] = report("replica", 5, 9, chain);
  reports["n3"][0] = report("replica", 7, 8, chain);
  absl::StatusOr<FailoverPlan> plan = planFailover("n1", reports);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string next = R"([["n3","n2",null]])";
  EXPECT_THAT(changesOf(*plan, 0),
              ::testing::ElementsAre("n3:active:" + next, "n2:replica:" + next));
  ASSERT_EQ(plan->lines.size(), 1u);
  EXPECT_THAT(plan->lines[0], HasSubstr("'n3' promoted (high prepared seqno 7, high seqno 8)"));

  // Equal prepares: the higher high seqno; all equal: the chain's order.
  reports["n3"][0] = report("replica", 5, 8, chain);
  EXPECT_EQ(changesOf(*planFailover("n1", reports), 0).front(),
            "n2:active:"
            R"([["n2","n3",null]])");
  reports["n3"][0] = report("replica", 5, 9, chain);
  EXPECT_EQ(changesOf(*planFailover("n1", reports), 0).front(),
            "n2:active:"
            R"([["n2","n3",null]])");
}

TEST(FailoverPlanTest, AFailedReplicaLeavesANullSlotAndOthersAreToldTheChainAsDead) {
  ClusterReports reports;
  reports["n2"][1] = report("active", 0, 4, R"([["n2","n1"]])");
  reports["n3"][1] = report("dead", 0, 0, R"([["n2","n1"]])");
  // A vbucket whose chain does not name n1 is left alone.
  reports["n2"][2] = report("replica", 0, 0, R"([["n3","n2"]])");
  reports["n3"][2] = report("active", 0, 0, R"([["n3","n2"]])");
  absl::StatusOr<FailoverPlan> plan = planFailover("n1", reports);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string next = R"([["n2",null]])";
  EXPECT_THAT(changesOf(*plan, 1), ::testing::ElementsAre("n2:active:" + next, "n3:dead:" + next));
  EXPECT_TRUE(changesOf(*plan, 2).empty());
  EXPECT_THAT(plan->lines, ::testing::ElementsAre(HasSubstr("vbucket 1: chain [n2, null]")));
}

TEST(FailoverPlanTest, TheActivesReportNamesTheChainAndAVbucketWithNoReplicaLeftIsReported) {
  ClusterReports reports;
  // n3's view is stale; n2, the active, has the chain.
  reports["n2"][0] = report("active", 0, 3, R"([["n2","n1"]])");
  reports["n3"][0] = report("dead", 0, 0, R"([["n1","n3"]])");
  // Vbucket 1's only replica is not a replica any more.
  reports["n2"][1] = report("dead", 0, 0, R"([["n1","n2"]])");
  absl::StatusOr<FailoverPlan> plan = planFailover("n1", reports);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(changesOf(*plan, 0).front(),
            "n2:active:"
            R"([["n2",null]])");
  EXPECT_TRUE(changesOf(*plan, 1).empty());
  EXPECT_THAT(plan->lines, ::testing::Contains(HasSubstr("vbucket 1: no replica of [n1, n2]")));
}

TEST(FailoverPlanTest, RefusesANodeThatAnsweredAndATopologyThatIsNotChains) {
  ClusterReports reports;
  reports["n1"][0] = report("active", 0, 0, R"([["n1"]])");
  EXPECT_THAT(std::string(planFailover("n1", reports).status().message()),
              HasSubstr("node 'n1' answered"));
  ClusterReports bad;
  bad["n2"][0] = report("replica", 0, 0, R"({"n1": 1})");
  EXPECT_THAT(std::string(planFailover("n1", bad).status().message()),
              HasSubstr("vbucket 0: topology is not chains' JSON"));
}

TEST(FailoverPlanTest, ParsesVbucketDetails) {
  absl::StatusOr<std::map<uint16_t, VbucketReport>> parsed =
      parseVbucketDetails({{"vb_0", "replica"},
                           {"vb_0:high_seqno", "12"},
                           {"vb_0:high_prepared_seqno", "10"},
                           {"vb_0:topology", R"([["n1","n2"]])"},
                           {"vb_7", "active"}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ(parsed->at(0).state, "replica");
  EXPECT_EQ(parsed->at(0).high_seqno, 12u);
  EXPECT_EQ(parsed->at(0).high_prepared_seqno, 10u);
  EXPECT_EQ(parsed->at(0).topology, R"([["n1","n2"]])");
  EXPECT_EQ(parsed->at(7).state, "active");
  EXPECT_THAT(std::string(parseVbucketDetails({{"vb_0:high_seqno", "x"}}).status().message()),
              HasSubstr("vb_0:high_seqno is not a number"));
}

}  // namespace
}  // namespace syncwrite::server::cli
