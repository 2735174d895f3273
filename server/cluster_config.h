// ClusterSpec: the nodes of a cluster of syncwrite-servers, as every node's
// configuration file names them (one file for all of them), and the vbucket
// map derived from it.
//
//   "cluster": {"nodes": {"n1": {"host": "127.0.0.1", "port": 11210},
//                         "n2": {"host": "127.0.0.1", "port_file": "/run/n2.port"}},
//               "replication_user": "Administrator"}
//
// A node gives its address as host and port, or as host and the port file
// the node writes once it listens (--port-file): the others read it when
// they connect, so a test can give every node an ephemeral port. A node may
// name its own "data_dir" (its couchbase buckets' directory, in place of the
// server key data_dir), since the nodes of one machine share the file. Each
// process is started with the same file and --node NAME (which sets
// node_name).
// replication_user is the user a replica authenticates as on its active
// (SASL PLAIN with that user's password from "users"); required when the
// configuration has users.
//
// Each bucket of a cluster has "num_replicas" (0..3, fewer than the nodes)
// instead of "replicas": vbucket v's chain is the nodes at positions
// v, v+1, ..., v+num_replicas (mod the number of nodes), the nodes ordered
// by name — the same on every node, so no map needs to be sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/status/statusor.h>
#include <nlohmann/json.hpp>

#include "vbucket/vbucket_state.h"

namespace syncwrite::server {

struct ClusterNode {
  std::string name;
  std::string host;
  uint16_t port = 0;      // 0: read port_file
  std::string port_file;  // when port is 0
  std::string data_dir;   // empty: the server key data_dir
};

struct ClusterSpec {
  std::vector<ClusterNode> nodes;  // by name
  std::string replication_user;

  const ClusterNode* find(const std::string& name) const;
  // vbucket `vbid`'s chain: the active first, then `num_replicas` replicas.
  std::vector<std::string> chain(vbucket::Vbid vbid, size_t num_replicas) const;
};

// Parses the "cluster" entry. InvalidArgument naming the key for anything
// malformed: no nodes, a node without host, with both or neither of port and
// port_file, a port outside 1..65535, unknown keys.
absl::StatusOr<ClusterSpec> parseClusterSpec(const nlohmann::json& value);

// The port `node` listens on now: its port, or the number its port file
// holds. NotFound / InvalidArgument naming the file when it is missing or
// malformed (the node has not started yet).
absl::StatusOr<uint16_t> resolvePort(const ClusterNode& node);

}  // namespace syncwrite::server
