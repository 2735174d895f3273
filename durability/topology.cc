#include "durability/topology.h"

#include <algorithm>

#include <absl/strings/str_cat.h>

namespace syncwrite::durability {

size_t ReplicationChain::definedNodes() const noexcept {
  return 1 + static_cast<size_t>(std::count_if(replicas.begin(), replicas.end(),
                                               [](const std::string& r) { return !r.empty(); }));
}

ReplicationTopology::ReplicationTopology(std::string active)
    : chains_{ReplicationChain{std::move(active), {}}} {}

absl::StatusOr<ReplicationTopology> ReplicationTopology::create(
    std::vector<ReplicationChain> chains) {
  if (chains.empty() || chains.size() > kMaxChains) {
    return absl::InvalidArgumentError(
        absl::StrCat("a replication topology has 1 or 2 chains, got ", chains.size()));
  }
  for (size_t c = 0; c < chains.size(); ++c) {
    const ReplicationChain& chain = chains[c];
    if (chain.active.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("chain ", c, " has no active node"));
    }
    if (chain.active != chains.front().active) {
      return absl::InvalidArgumentError(absl::StrCat("chain ", c, " has active \"", chain.active,
                                                     "\" but chain 0 has \"", chains.front().active,
                                                     "\""));
    }
    if (chain.replicas.size() > kMaxReplicas) {
      return absl::InvalidArgumentError(absl::StrCat("chain ", c, " has ", chain.replicas.size(),
                                                     " replicas, at most ", kMaxReplicas));
    }
    std::vector<std::string> seen{chain.active};
    for (const std::string& r : chain.replicas) {
      if (r.empty()) continue;
      if (std::find(seen.begin(), seen.end(), r) != seen.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("chain ", c, " names node \"", r, "\" twice"));
      }
      seen.push_back(r);
    }
  }
  return ReplicationTopology(std::move(chains));
}

absl::StatusOr<ReplicationTopology> ReplicationTopology::fromJson(const nlohmann::json& json) {
  if (!json.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a replication topology is an array of chains, got ", json.dump()));
  }
  std::vector<ReplicationChain> chains;
  for (const auto& chain_json : json) {
    if (!chain_json.is_array() || chain_json.empty() || !chain_json[0].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a chain is an array starting with the active node's name, got ", chain_json.dump()));
    }
    ReplicationChain chain{chain_json[0].get<std::string>(), {}};
    for (size_t i = 1; i < chain_json.size(); ++i) {
      if (chain_json[i].is_null()) {
        chain.replicas.emplace_back();
      } else if (chain_json[i].is_string() &&
                 !chain_json[i].get_ref<const std::string&>().empty()) {
        chain.replicas.push_back(chain_json[i].get<std::string>());
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("a replica is a non-empty node name or null, got ", chain_json[i].dump()));
      }
    }
    chains.push_back(std::move(chain));
  }
  return create(std::move(chains));
}

nlohmann::json ReplicationTopology::toJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const ReplicationChain& chain : chains_) {
    nlohmann::json nodes = nlohmann::json::array({chain.active});
    for (const std::string& replica : chain.replicas) {
      nodes.push_back(replica.empty() ? nlohmann::json(nullptr) : nlohmann::json(replica));
    }
    out.push_back(std::move(nodes));
  }
  return out;
}

bool ReplicationTopology::isDurabilityPossible() const noexcept {
  return std::all_of(chains_.begin(), chains_.end(),
                     [](const ReplicationChain& c) { return c.definedNodes() >= c.majority(); });
}

bool ReplicationTopology::contains(const std::string& node) const noexcept {
  if (node.empty()) return false;
  return std::any_of(chains_.begin(), chains_.end(), [&](const ReplicationChain& c) {
    return c.active == node ||
           std::find(c.replicas.begin(), c.replicas.end(), node) != c.replicas.end();
  });
}

}  // namespace syncwrite::durability
