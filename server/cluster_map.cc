#include "server/cluster_map.h"

#include <absl/strings/str_cat.h>
#include <nlohmann/json.hpp>

#include "server/server_context.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {
namespace {

nlohmann::json nodesExt(const ServerContext& server) {
  return nlohmann::json::array(
      {{{"hostname", "$HOST"}, {"thisNode", true}, {"services", {{"kv", server.port}}}}});
}

}  // namespace

std::string bucketConfigJson(const Bucket& bucket, const ServerContext& server) {
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
      {"bucketCapabilities", {"durableWrite", "cccp", "touch", "nodesExt", "cbhello"}},
  };
  return config.dump();
}

std::string clusterConfigJson(const ServerContext& server) {
  const nlohmann::json config = {{"rev", 1}, {"revEpoch", 1}, {"nodesExt", nodesExt(server)}};
  return config.dump();
}

}  // namespace syncwrite::server
