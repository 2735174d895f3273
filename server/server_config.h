// ServerConfig: the configuration file of syncwrite-server, checked and split.
//
// The file is one JSON object: server keys at the top level, and "buckets",
// an object of bucket name → that bucket's keys, plus two structural entries
// that are not configuration keys:
//
//   {"node_name": "active",
//    "buckets": {"default": {"durability_timeout_mode": "polling",
//                            "replicas": ["replica1", "replica2"],
//                            "simulated_replicas": {"replica1": {"ack_delay_ms": 1}}}}}
//
//  - "replicas": the replica nodes of every vbucket's chain (up to 3), after
//    this node (node_name), which is always the active;
//    A replica may be null: an undefined slot of the chain (kv_engine's
//    topology JSON spells it so), which counts in the majority but can never
//    acknowledge, so a SyncWrite needing it is refused DurabilityImpossible;
//  - "simulated_replicas": those of them the server acknowledges for itself,
//    each ack_delay_ms (0..60000) after a prepare, plus a random 0..
//    ack_jitter_ms (0..60000, default 0) that never reorders one replica's
//    acks; both can be changed at run time (replica_faults.h). A replica listed but not
//    simulated must acknowledge over DCP; one that never does makes every
//    SyncWrite time out.
// In a "cluster" (cluster_config.h) a bucket has "num_replicas" instead.
// A third structural entry at the top level, "users", names the users
// connections authenticate as (SASL), each {"password": "<text>"} and, to
// limit the user to some buckets, "buckets": [names of configured buckets]:
//    "users": {"Administrator": {"password": "password"},
//              "app": {"password": "s3cret", "buckets": ["default"]}}
// With users, a connection must authenticate before SELECT_BUCKET or any data
// command; without, the server is open (and says so at start-up). A user
// without "buckets" may access every bucket; one with it, only those
// (SELECT_BUCKET of any other name is NoAccess, as kv_engine answers a user
// without the privilege, whether the bucket exists or not). The server
// key default_bucket names a bucket a connection works in until it selects
// one (for plain memcached clients, which cannot).
// Everything else goes to config::Configuration (server scope for the top
// level, bucket scope per bucket), so unknown keys and bad values are refused
// with the config layer's own message, prefixed with where they were.
//
// Loading is all-or-nothing: any error returns a status and builds nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>
#include <nlohmann/json.hpp>

#include "config/configuration.h"
#include "server/cluster_config.h"

namespace syncwrite::server {

struct SimulatedReplicaSpec {
  std::string name;
  std::chrono::milliseconds ack_delay{0};
  std::chrono::milliseconds ack_jitter{0};  // each ack a further random 0..this later
};

struct BucketSpec {
  std::string name;
  std::unique_ptr<config::Configuration> config;  // bucket scope
  std::vector<std::string> replicas;              // in chain order
  std::vector<SimulatedReplicaSpec> simulated;    // a subset of replicas
  // In a cluster (ServerConfig::cluster): the replicas of each vbucket's
  // chain (ClusterSpec::chain); `replicas` and `simulated` are then empty.
  size_t num_replicas = 0;
  // A couchbase (persistent) bucket's directory, data_dir/<name>; empty for
  // an ephemeral bucket.
  std::filesystem::path data_dir;
};

struct ServerConfig {
  std::unique_ptr<config::Configuration> server;          // server scope
  std::map<std::string, std::string, std::less<>> users;  // name -> password
  // The users limited to some buckets: name -> those buckets (each one of
  // `buckets`). A user not here may access every bucket.
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> user_buckets;
  std::vector<BucketSpec> buckets;  // in name order
  // The "cluster" entry (cluster_config.h); none: a single node, every
  // vbucket active here.
  std::optional<ClusterSpec> cluster;
  // The server key prometheus_port when the file has it (0: ephemeral);
  // none: no metrics endpoint.
  std::optional<uint16_t> prometheus_port;
};

// The configuration used without --config: one user, "Administrator" with
// password "password", and one bucket "default" with every key at its
// default (1024 vbuckets, event-driven) and one replica, "replica1",
// simulated with a 1 ms ack delay.
extern const std::string_view kDefaultConfigJson;

// Checks and splits a parsed document (see the file comment). A non-empty
// `node` (the --node flag) replaces the document's node_name; in a cluster it
// must name one of its nodes.
absl::StatusOr<ServerConfig> loadServerConfig(const nlohmann::json& document,
                                              std::string_view node = {});
// As above from text; InvalidArgument with the parser's message (and byte
// position) for malformed JSON.
absl::StatusOr<ServerConfig> loadServerConfigText(std::string_view text,
                                                  std::string_view node = {});
// As above from a file read with config::readFile: its error when the file
// cannot be read (NotFound naming the path when missing). Other errors are
// prefixed with the path.
absl::StatusOr<ServerConfig> loadServerConfigFile(const std::filesystem::path& path,
                                                  std::string_view node = {});

}  // namespace syncwrite::server
