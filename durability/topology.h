// ReplicationTopology: the nodes whose acknowledgements a SyncWrite needs.
//
// One or two chains (two during a rebalance: the current and the next
// placement). Each chain is the active node followed by up to 3 replicas; a
// replica slot may be undefined (named "" here; null in kv_engine's topology
// JSON) while the cluster has not placed it. As in kv_engine:
//  - a chain's majority is size / 2 + 1, counting undefined slots in size;
//  - a write is satisfied when, in every chain, a majority of nodes — the
//    active always among them — have acknowledged it;
//  - durability is impossible when some chain has fewer defined nodes than
//    its majority: the write could never be satisfied, so it is refused.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <absl/status/statusor.h>
#include <nlohmann/json.hpp>

namespace syncwrite::durability {

struct ReplicationChain {
  std::string active;
  std::vector<std::string> replicas;  // "" = undefined slot

  size_t size() const noexcept { return 1 + replicas.size(); }
  size_t majority() const noexcept { return size() / 2 + 1; }
  size_t definedNodes() const noexcept;
};

class ReplicationTopology {
 public:
  static constexpr size_t kMaxChains = 2;
  static constexpr size_t kMaxReplicas = 3;

  // A topology of one chain: `active` and no replicas (a write commits on
  // the active's own acknowledgement).
  explicit ReplicationTopology(std::string active);

  // Checks and builds a topology. InvalidArgument, naming the problem, for:
  // no chain or more than two; a chain with an empty active or more than three
  // replicas; chains whose actives differ; a node named twice in one chain.
  static absl::StatusOr<ReplicationTopology> create(std::vector<ReplicationChain> chains);

  // From kv_engine's JSON shape: [["active", "replica1", null], [...]].
  static absl::StatusOr<ReplicationTopology> fromJson(const nlohmann::json& json);
  // The same shape back: undefined replicas are null; fromJson(toJson()) is
  // this topology.
  nlohmann::json toJson() const;

  const std::vector<ReplicationChain>& chains() const noexcept { return chains_; }
  const std::string& active() const noexcept { return chains_.front().active; }

  // False when some chain cannot reach its majority (see the file comment).
  bool isDurabilityPossible() const noexcept;

  // True when `node` is the active or a defined replica of some chain.
  bool contains(const std::string& node) const noexcept;

 private:
  explicit ReplicationTopology(std::vector<ReplicationChain> chains) : chains_(std::move(chains)) {}
  std::vector<ReplicationChain> chains_;
};

}  // namespace syncwrite::durability
