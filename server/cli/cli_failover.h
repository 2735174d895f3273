// syncwrite-cli failover NODE: the hard failover ns_server runs, for a
// cluster of syncwrite-servers (server/cluster_config.h).
//
// Reads the cluster file (--cluster: the nodes' configuration file, whose
// "cluster" entry names every node), asks every node but NODE for its
// STAT vbucket-details, plans the new chains (failover_plan.h) and sends each
// node its SET_VBUCKETs with the new topology, each vbucket's new active
// first. Requires every node but NODE to answer: with one missing, nothing
// is sent. Costs one connection per node and O(vbuckets × nodes) messages.
#pragma once

#include <chrono>
#include <ostream>

#include "server/cli/cli_args.h"

namespace syncwrite::server::cli {

// Exit status as cli_outcome.h: kExitUsage for a cluster file that cannot be
// read or does not name NODE, kExitNoAnswer when a node cannot be reached
// (nothing changed), kExitServerError when a node refused a SET_VBUCKET (the
// changes before it stay; the message names which).
int runFailover(const CliArgs& args, std::ostream& out, std::ostream& err,
                std::chrono::milliseconds wait);

}  // namespace syncwrite::server::cli
