#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "durability/level.h"
#include "durability/requirements.h"
#include "durability/topology.h"

namespace syncwrite::durability {
namespace {

using std::chrono::milliseconds;
using testing::HasSubstr;

TEST(Level, WireValuesAreTheProtocols) {
  EXPECT_EQ(levelFromWire(0), Level::kNone);
  EXPECT_EQ(levelFromWire(1), Level::kMajority);
  EXPECT_EQ(levelFromWire(2), Level::kMajorityAndPersistOnMaster);
  EXPECT_EQ(levelFromWire(3), Level::kPersistToMajority);
  EXPECT_EQ(levelFromWire(4), std::nullopt);
  EXPECT_EQ(levelFromWire(0xff), std::nullopt);
}

TEST(Level, ConfigSpellingsRoundTrip) {
  for (Level l : {Level::kNone, Level::kMajority, Level::kMajorityAndPersistOnMaster,
                  Level::kPersistToMajority}) {
    EXPECT_EQ(levelFromString(toString(l)), l);
  }
  EXPECT_EQ(levelFromString("Majority"), std::nullopt);
  EXPECT_EQ(levelFromString(""), std::nullopt);
}

TEST(Level, PersistenceNeedsAndMinimum) {
  EXPECT_FALSE(needsActivePersistence(Level::kMajority));
  EXPECT_TRUE(needsActivePersistence(Level::kMajorityAndPersistOnMaster));
  EXPECT_TRUE(needsActivePersistence(Level::kPersistToMajority));
  EXPECT_FALSE(needsReplicaPersistence(Level::kMajorityAndPersistOnMaster));
  EXPECT_TRUE(needsReplicaPersistence(Level::kPersistToMajority));
  EXPECT_EQ(atLeast(Level::kNone, Level::kMajority), Level::kMajority);
  EXPECT_EQ(atLeast(Level::kPersistToMajority, Level::kMajority), Level::kPersistToMajority);
}

TEST(Timeout, ExplicitRangeIsOneTo65534) {
  EXPECT_EQ(Timeout::fromMillis(0), std::nullopt);
  EXPECT_NE(Timeout::fromMillis(1), std::nullopt);
  EXPECT_NE(Timeout::fromMillis(65534), std::nullopt);
  EXPECT_EQ(Timeout::fromMillis(65535), std::nullopt);
}

TEST(Timeout, Deadlines) {
  const clock::TimePoint now(std::chrono::hours(1));
  EXPECT_EQ(Timeout::fromMillis(500)->deadline(now, milliseconds(30000)), now + milliseconds(500));
  EXPECT_EQ(Timeout::bucketDefault().deadline(now, milliseconds(30000)), now + milliseconds(30000));
  EXPECT_EQ(Timeout::infinite().deadline(now, milliseconds(30000)), clock::kNever);
  EXPECT_TRUE(Timeout::infinite().isInfinite());
  EXPECT_TRUE(Timeout::bucketDefault().isBucketDefault());
}

TEST(ReplicationChain, MajorityIsHalfPlusOne) {
  EXPECT_EQ((ReplicationChain{"a", {}}).majority(), 1u);
  EXPECT_EQ((ReplicationChain{"a", {"b"}}).majority(), 2u);
  EXPECT_EQ((ReplicationChain{"a", {"b", "c"}}).majority(), 2u);
  EXPECT_EQ((ReplicationChain{"a", {"b", "c", "d"}}).majority(), 3u);
}

TEST(ReplicationTopology, UndefinedReplicasCanMakeDurabilityImpossible) {
  auto one_missing_of_two =
      ReplicationTopology::fromJson(nlohmann::json::parse(R"([["a", null]])"));
  ASSERT_TRUE(one_missing_of_two.ok()) << one_missing_of_two.status();
  EXPECT_FALSE(one_missing_of_two->isDurabilityPossible());

  auto one_missing_of_three =
      ReplicationTopology::fromJson(nlohmann::json::parse(R"([["a", "b", null]])"));
  ASSERT_TRUE(one_missing_of_three.ok());
  EXPECT_TRUE(one_missing_of_three->isDurabilityPossible());

  auto second_chain_short =
      ReplicationTopology::fromJson(nlohmann::json::parse(R"([["a", "b"], ["a", null, null]])"));
  ASSERT_TRUE(second_chain_short.ok());
  EXPECT_FALSE(second_chain_short->isDurabilityPossible());

  EXPECT_TRUE(ReplicationTopology("a").isDurabilityPossible());
}

TEST(ReplicationTopology, ContainsDefinedNodesOnly) {
  auto t =
      ReplicationTopology::fromJson(nlohmann::json::parse(R"([["a", "b", null], ["a", "c"]])"));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->contains("a"));
  EXPECT_TRUE(t->contains("b"));
  EXPECT_TRUE(t->contains("c"));
  EXPECT_FALSE(t->contains(""));
  EXPECT_FALSE(t->contains("d"));
  EXPECT_EQ(t->active(), "a");
}

TEST(ReplicationTopology, RefusesMalformedTopologies) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& c : {
           Case{R"([])", "1 or 2 chains, got 0"},
           Case{R"([["a"], ["a"], ["a"]])", "1 or 2 chains, got 3"},
           Case{R"([["a", "b", "c", "d", "e"]])", "4 replicas, at most 3"},
           Case{R"([["a", "b"], ["x", "b"]])", "chain 1 has active \"x\""},
           Case{R"([["a", "b", "b"]])", "names node \"b\" twice"},
           Case{R"([["a", "a"]])", "names node \"a\" twice"},
           Case{R"([[null, "b"]])", "starting with the active node's name"},
           Case{R"([["a", 3]])", "non-empty node name or null"},
           Case{R"([["a", ""]])", "non-empty node name or null"},
           Case{R"({"a": 1})", "an array of chains"},
       }) {
    auto t = ReplicationTopology::fromJson(nlohmann::json::parse(c.json));
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(c.message)) << c.json;
  }
}

}  // namespace
}  // namespace syncwrite::durability
