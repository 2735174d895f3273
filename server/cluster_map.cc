#include "server/cluster_map.h"

#include <absl/strings/str_cat.h>
#include <nlohmann/json.hpp>

#include "server/server_context.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {
namespace {

// What the bucket does, by the names Couchbase Server's cluster map uses
// (couchbase-cxx-client's bucket capability parser reads "xattr",
// "subdoc.ReplaceBodyWithXattr" and "subdoc.DocumentMacroSupport"): sub-document
// commands with xattrs, REPLACE_BODY_WITH_XATTR, and the ${$document} macros.
// Not "tombstonedUserXAttrs" nor "subdoc.ReviveDocument": deletions keep no tombstone here.
nlohmann::json bucketCapabilities() {
  return {"durableWrite",
          "cccp",
          "touch",
          "nodesExt",
          "cbhello",
          "xattr",
          "subdoc.ReplaceBodyWithXattr",
          "subdoc.DocumentMacroSupport"};
}

nlohmann::json nodesExt(const ServerContext& server) {
  return nlohmann::json::array(
      {{{"hostname", "$HOST"}, {"thisNode", true}, {"services", {{"kv", server.port}}}}});
}

// A cluster node's port as the map gives it: this node's bound port, the
// others' from their address (0 while a node's port file is not there yet).
uint16_t portOf(const ClusterNode& node, const ServerContext& server) {
  if (node.name == server.node_name) return server.port;
  return resolvePort(node).value_or(0);
}

nlohmann::json clusterNodesExt(const ClusterSpec& cluster, const ServerContext& server) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const ClusterNode& node : cluster.nodes) {
    nlohmann::json entry = {{"hostname", node.host}, {"services", {{"kv", portOf(node, server)}}}};
    if (node.name == server.node_name) entry["thisNode"] = true;
    nodes.push_back(std::move(entry));
  }
  return nodes;
}

// The map of a bucket of a cluster: every node, and each vbucket's chain as
// this node knows it (its topology: derived at start, then as SET_VBUCKET set it).
std::string clusterBucketConfigJson(const Bucket& bucket, const ServerContext& server,
                                    const ClusterSpec& cluster) {
  nlohmann::json servers = nlohmann::json::array();
  for (const ClusterNode& node : cluster.nodes) {
    servers.push_back(absl::StrCat(node.host, ":", portOf(node, server)));
  }
  const auto indexOf = [&cluster](const std::string& name) {
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      if (cluster.nodes[i].name == name) return static_cast<int>(i);
    }
    return -1;  // undefined ("" / null) or not a node of the cluster
  };
  const size_t replicas = bucket.numReplicas();
  nlohmann::json map = nlohmann::json::array();
  for (size_t vb = 0; vb < bucket.vbuckets().size(); ++vb) {
    const durability::ReplicationTopology topology =
        bucket.durability().topology(static_cast<vbucket::Vbid>(vb));
    const durability::ReplicationChain& chain = topology.chains().front();
    nlohmann::json entry = nlohmann::json::array({indexOf(chain.active)});
    for (size_t r = 0; r < replicas; ++r) {
      entry.push_back(r < chain.replicas.size() ? indexOf(chain.replicas[r]) : -1);
    }
    map.push_back(std::move(entry));
  }
  const nlohmann::json config = {
      {"rev", bucket.configRevision()},
      {"revEpoch", 1},
      {"name", bucket.name()},
      {"uuid", bucket.uuid()},
      {"nodeLocator", "vbucket"},
      {"nodesExt", clusterNodesExt(cluster, server)},
      {"vBucketServerMap",
       {{"hashAlgorithm", "CRC"},
        {"numReplicas", replicas},
        {"serverList", std::move(servers)},
        {"vBucketMap", std::move(map)}}},
      {"bucketCapabilities", bucketCapabilities()},
  };
  return config.dump();
}

}  // namespace

std::string bucketConfigJson(const Bucket& bucket, const ServerContext& server) {
  if (server.cluster) return clusterBucketConfigJson(bucket, server, *server.cluster);
  const size_t replicas = bucket.durability().topology().chains().front().replicas.size();
  nlohmann::json map = nlohmann::json::array();
  const vbucket::VBucketMap& vbuckets = bucket.vbuckets();
  for (size_t vb = 0; vb < vbuckets.size(); ++vb) {
    const vbucket::VBucket* v = vbuckets.get(static_cast<vbucket::Vbid>(vb));
    const bool active = v != nullptr && v->state() == vbucket::VBucketState::kActive;
    nlohmann::json chain = nlohmann::json::array({active ? 0 : -1});
    for (size_t r = 0; r < replicas; ++r) chain.push_back(-1);
    map.push_back(std::move(chain));
  }
  const nlohmann::json config = {
      {"rev", bucket.configRevision()},
      {"revEpoch", 1},
      {"name", bucket.name()},
      {"uuid", bucket.uuid()},
      {"nodeLocator", "vbucket"},
      {"nodesExt", nodesExt(server)},
      {"vBucketServerMap",
       {{"hashAlgorithm", "CRC"},
        {"numReplicas", replicas},
        {"serverList", {absl::StrCat("$HOST:", server.port)}},
        {"vBucketMap", std::move(map)}}},
      {"bucketCapabilities", bucketCapabilities()},
  };
  return config.dump();
}

std::string clusterConfigJson(const ServerContext& server) {
  const nlohmann::json config = {
      {"rev", 1},
      {"revEpoch", 1},
      {"nodesExt", server.cluster ? clusterNodesExt(*server.cluster, server) : nodesExt(server)}};
  return config.dump();
}

}  // namespace syncwrite::server
