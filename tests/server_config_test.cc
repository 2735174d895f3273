// Loading syncwrite-server's configuration file (server/server_config.h):
// structural keys split off, the rest checked by the config layer.
#include "server/server_config.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace syncwrite::server {
namespace {

TEST(ServerConfig, TheEmbeddedDefaultIsOneBucketWithOneSimulatedReplica) {
  auto config = loadServerConfigText(kDefaultConfigJson);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server->get(config::keys::kNodeName), "active");
  ASSERT_EQ(config->buckets.size(), 1u);
  const BucketSpec& bucket = config->buckets.front();
  EXPECT_EQ(bucket.name, "default");
  EXPECT_EQ(bucket.config->get(config::keys::kMaxVbuckets), 1024u);
  EXPECT_EQ(bucket.config->get(config::keys::kDurabilityTimeoutMode),
            config::DurabilityTimeoutMode::kEventDriven);
  EXPECT_EQ(bucket.replicas, std::vector<std::string>{"replica1"});
  ASSERT_EQ(bucket.simulated.size(), 1u);
  EXPECT_EQ(bucket.simulated.front().name, "replica1");
  EXPECT_EQ(bucket.simulated.front().ack_delay, std::chrono::milliseconds(1));
}

TEST(ServerConfig, SplitsServerKeysBucketKeysAndStructure) {
  auto config = loadServerConfigText(R"({
    "node_name": "n0", "num_nonio_threads": 3,
    "buckets": {
      "b": {"durability_timeout_mode": "polling", "max_vbuckets": 8,
            "replicas": ["r1", "r2"], "simulated_replicas": {"r2": {"ack_delay_ms": 0}}},
      "a": {}
    }})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server->get(config::keys::kNodeName), "n0");
  EXPECT_EQ(config->server->get(config::keys::kNumNonioThreads), 3u);
  ASSERT_EQ(config->buckets.size(), 2u);
  EXPECT_EQ(config->buckets[0].name, "a");  // in name order
  EXPECT_TRUE(config->buckets[0].replicas.empty());
  const BucketSpec& b = config->buckets[1];
  EXPECT_EQ(b.config->get(config::keys::kDurabilityTimeoutMode),
            config::DurabilityTimeoutMode::kPolling);
  EXPECT_EQ(b.config->get(config::keys::kMaxVbuckets), 8u);
  EXPECT_EQ(b.replicas, (std::vector<std::string>{"r1", "r2"}));
  ASSERT_EQ(b.simulated.size(), 1u);
  EXPECT_EQ(b.simulated[0].name, "r2");
  EXPECT_EQ(b.simulated[0].ack_delay, std::chrono::milliseconds(0));
}

TEST(ServerConfig, RefusesBadDocumentsSayingWhere) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"buckets": {"x": {}})", "malformed JSON"},
           // A parser exception that is not a parse_error (found by fuzzing).
           {R"({"buckets": {"x": {"max_size": 1e999}}})", "malformed JSON: "},
           {R"([])", "must be a JSON object"},
           {R"({})", "\"buckets\" must be an object naming at least one bucket"},
           {R"({"buckets": {}})", "at least one bucket"},
           {R"({"bogus": 1, "buckets": {"a": {}}})", "bogus"},
           {R"({"max_vbuckets": 4, "buckets": {"a": {}}})", "max_vbuckets"},
           {R"({"buckets": {"a": {"durability_timeout_mode": "sometimes"}}})", "buckets.a: "},
           {R"({"buckets": {"a": {"node_name": "x"}}})", "node_name"},
           {R"({"buckets": {"a b": {}}})", "bucket name 'a b'"},
           {R"({"buckets": {"a": {"replicas": "r1"}}})", "\"replicas\" must be an array"},
           {R"({"buckets": {"a": {"replicas": ["r1", "r1"]}}})", "names 'r1' twice"},
           {R"({"buckets": {"a": {"replicas": ["active"]}}})", "names 'active' twice"},
           {R"({"buckets": {"a": {"replicas": ["r1", "r2", "r3", "r4"]}}})", "at most 3"},
           {R"({"buckets": {"a": {"replicas": [""]}}})", "neither a non-empty node name nor null"},
           {R"({"buckets": {"a": {"replicas": ["r1"], "simulated_replicas": {"r2": {}}}}})",
            "simulated_replicas.r2: not listed"},
           {R"({"buckets": {"a": {"replicas": ["r1"],
                "simulated_replicas": {"r1": {"ack_delay_ms": -1}}}}})",
            "ack_delay_ms -1"},
           {R"({"buckets": {"a": {"replicas": ["r1"],
                "simulated_replicas": {"r1": {"delay": 1}}}}})",
            "unknown key 'delay'"},
           {R"({"users": {"u": {"pass": "p"}}, "buckets": {"a": {}}})", "users.u: must be"},
           {R"({"users": {"u": {"password": "p", "role": "x"}}, "buckets": {"a": {}}})",
            "users.u: must be"},
           {R"({"users": {"u": {"password": "p", "buckets": "a"}}, "buckets": {"a": {}}})",
            "users.u.buckets: must be an array"},
           {R"({"users": {"u": {"password": "p", "buckets": [""]}}, "buckets": {"a": {}}})",
            "users.u.buckets: each entry"},
           {R"({"users": {"u": {"password": "p", "buckets": ["b"]}}, "buckets": {"a": {}}})",
            "users.u.buckets: no bucket named 'b'"},
       }) {
    auto config = loadServerConfigText(c.json);
    ASSERT_FALSE(config.ok()) << c.json;
    EXPECT_NE(config.status().message().find(c.message), std::string::npos)
        << c.json << " -> " << config.status().message();
  }
}

// A user may be limited to some buckets; one without "buckets" may access
// every bucket, and so is not listed.
TEST(ServerConfig, UsersMayBeLimitedToSomeBuckets) {
  auto config = loadServerConfigText(R"({
    "users": {"admin": {"password": "a"}, "app": {"password": "b", "buckets": ["x", "y"]},
              "none": {"password": "c", "buckets": []}},
    "buckets": {"x": {}, "y": {}, "z": {}}})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->users.size(), 3u);
  EXPECT_EQ(config->user_buckets.size(), 2u);
  EXPECT_FALSE(config->user_buckets.contains("admin"));
  EXPECT_EQ(config->user_buckets.at("app"), (std::set<std::string, std::less<>>{"x", "y"}));
  EXPECT_TRUE(config->user_buckets.at("none").empty());
}

TEST(ServerConfig, AMissingFileIsNamed) {
  auto config = loadServerConfigFile("/nonexistent/syncwrite.json");
  ASSERT_FALSE(config.ok());
  EXPECT_TRUE(absl::IsNotFound(config.status()));
  EXPECT_NE(config.status().message().find("/nonexistent/syncwrite.json"), std::string::npos);
}

}  // namespace
}  // namespace syncwrite::server
