// planFailover: what syncwrite-cli's `failover NODE` tells each node, worked
// out from what the surviving nodes report, without touching the network.
//
// As ns_server's hard failover (failover.erl): for each vbucket whose chain
// names NODE,
//  - NODE was its active: the surviving replica of the chain with the
//    highest (high prepared seqno, high seqno) becomes active
//    (find_max_replica), the chain's other nodes follow it, and NODE's slot
//    becomes null at the end of the chain (mb_map:promote_replica);
//  - NODE was a replica: the active keeps it, NODE's slot becomes null.
// The chain keeps its length, so a null counts in the majority (a chain that
// lost its only replica answers durable writes DurabilityImpossible until a
// node takes the slot). Every surviving node is told the new chain, those
// outside it as dead, so every node's cluster map shows it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

#include "server/protocol/command_values.h"

namespace syncwrite::server::cli {

// One node's STAT vbucket-details of one vbucket.
struct VbucketReport {
  std::string state;  // "active", "replica", "pending", "dead"
  uint64_t high_seqno = 0;
  uint64_t high_prepared_seqno = 0;
  std::string topology;  // the chains' JSON, [["n1", "n2"]]
};

// Node name -> vbucket -> report; every surviving node of the cluster.
using ClusterReports = std::map<std::string, std::map<uint16_t, VbucketReport>>;

// Parses one node's vbucket-details stats (name, value pairs) into reports.
// InvalidArgument naming the stat for a value that is not what the server
// sends.
absl::StatusOr<std::map<uint16_t, VbucketReport>> parseVbucketDetails(
    const std::vector<std::pair<std::string, std::string>>& stats);

struct VbucketChange {
  uint16_t vbucket = 0;
  std::string node;  // who is told
  protocol::VbucketState state = protocol::VbucketState::kDead;
  std::string topology;  // the SET_VBUCKET value's chains, [["n2", null]]
};

struct FailoverPlan {
  // In the order to send them: per vbucket, its new active first.
  std::vector<VbucketChange> changes;
  // One line per vbucket changed, and one per vbucket left with no active
  // (NODE was its active and no replica of it survives).
  std::vector<std::string> lines;
};

// InvalidArgument when `failed` reports (it must be down) or a report's
// topology is not chains' JSON. A vbucket's chain is the one its active
// reports, else the first one reported.
absl::StatusOr<FailoverPlan> planFailover(const std::string& failed, const ClusterReports& reports);

}  // namespace syncwrite::server::cli
