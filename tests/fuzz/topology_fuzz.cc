// Fuzz target: durability::ReplicationTopology from kv_engine's topology
// JSON ([["active", "replica", null], ...]).
//
// Input: JSON text.
//
// Properties, for a topology fromJson() accepts:
//  - it is what topology.h promises: 1 or 2 chains, each with a non-empty
//    active (the same in every chain), at most 3 replicas, no node named
//    twice in a chain;
//  - printed back to the JSON shape (undefined slots as null), it is accepted
//    again and is the same topology;
//  - isDurabilityPossible() is "every chain has a majority (size / 2 + 1) of
//    defined nodes", and contains() is true for every named node, false for "".
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "durability/topology.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace durability = syncwrite::durability;

nlohmann::json print(const durability::ReplicationTopology& topology) {
  nlohmann::json chains = nlohmann::json::array();
  for (const durability::ReplicationChain& chain : topology.chains()) {
    nlohmann::json nodes = nlohmann::json::array({chain.active});
    for (const std::string& replica : chain.replicas) {
      nodes.push_back(replica.empty() ? nlohmann::json(nullptr) : nlohmann::json(replica));
    }
    chains.push_back(std::move(nodes));
  }
  return chains;
}

void checkShape(const durability::ReplicationTopology& topology) {
  const auto& chains = topology.chains();
  FUZZ_CHECK(!chains.empty() && chains.size() <= 2, "not 1 or 2 chains");
  bool possible = true;
  for (const durability::ReplicationChain& chain : chains) {
    FUZZ_CHECK(!chain.active.empty() && chain.active == topology.active(), "a bad active");
    FUZZ_CHECK(chain.replicas.size() <= 3, "more than 3 replicas");
    std::set<std::string> named{chain.active};
    size_t defined = 1;
    for (const std::string& replica : chain.replicas) {
      if (replica.empty()) continue;
      ++defined;
      FUZZ_CHECK(named.insert(replica).second, "a node named twice in a chain");
      FUZZ_CHECK(topology.contains(replica), "contains() misses a replica");
    }
    possible = possible && defined >= (1 + chain.replicas.size()) / 2 + 1;
  }
  FUZZ_CHECK(topology.contains(topology.active()), "contains() misses the active");
  FUZZ_CHECK(!topology.contains(""), "contains() finds the undefined slot");
  FUZZ_CHECK(topology.isDurabilityPossible() == possible, "isDurabilityPossible() is wrong");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json json =
      nlohmann::json::parse(data, data + size, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  const auto topology = durability::ReplicationTopology::fromJson(json);
  if (!topology.ok()) return 0;
  checkShape(*topology);
  const nlohmann::json printed = print(*topology);
  const auto again = durability::ReplicationTopology::fromJson(printed);
  FUZZ_CHECK(again.ok(), std::string(again.status().message()));
  FUZZ_CHECK(print(*again) == printed, "the reprinted topology differs");
  return 0;
}
