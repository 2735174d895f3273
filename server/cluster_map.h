// The cluster map (kv_engine's "terse" bucket config) syncwrite-server gives
// clients: GET_CLUSTER_CONFIG (0xb5) answers it, and NOT_MY_VBUCKET answers
// carry it so a client re-routes by itself.
//
// A single server is a one-node cluster. Fields, as couchbase-cxx-client
// (core/topology/configuration_json.hxx) reads them and kv_engine sends them:
//   rev        raised on every vbucket state change (Bucket::configRevision)
//   revEpoch   1
//   name, uuid the bucket's
//   nodeLocator "vbucket"
//   nodesExt   one node: hostname "$HOST" (the client substitutes the address
//              it connected to), thisNode true, services.kv = the bound port
//   vBucketServerMap  hashAlgorithm "CRC", numReplicas = the chain's
//              replicas, serverList ["$HOST:<port>"], vBucketMap one entry per
//              vbucket: [0, -1...] when active here, [-1, -1...] otherwise
//              (replicas are simulated or external and not addressable)
//   bucketCapabilities  what the server implements ("durableWrite", "cccp",
//              "touch", "nodesExt", "xattr" is not claimed)
// Without a bucket (before SELECT_BUCKET) the cluster-level map: rev,
// revEpoch and nodesExt only.
//
// In a cluster (ServerContext::cluster) the map lists every node by name
// order, with its configured host and its port (read from its port file
// when it gives one; 0 until that exists), thisNode on this one; serverList
// is "host:port" of each, and vBucketMap each vbucket's chain as this node's
// monitor holds it (the derived chain, or what SET_VBUCKET set), numReplicas
// entries after the active, -1 for an undefined node.
#pragma once

#include <string>

#include "server/bucket.h"

namespace syncwrite::server {

struct ServerContext;

// The bucket's map as JSON text. Cost: O(vbuckets).
std::string bucketConfigJson(const Bucket& bucket, const ServerContext& server);

// The cluster-level map as JSON text.
std::string clusterConfigJson(const ServerContext& server);

}  // namespace syncwrite::server
