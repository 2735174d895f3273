// ServerContext: what every connection of syncwrite-server shares — the
// server configuration, the executor pool, the buckets, and the counters of
// the general stats.
//
// Built once at start-up (server.cc) and read-only afterwards except for the
// atomic counters; buckets are neither added nor removed while serving, so
// findBucket() takes no lock.
//
// Lifetime: outlives every connection; the pool outlives the buckets
// (members are destroyed in reverse order).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "config/configuration.h"
#include "executor/executor_pool.h"
#include "server/bucket.h"
#include "server/cluster_config.h"
#include "server/metrics/op_counters.h"
#include "server/sasl/user_store.h"
#include "server/turn_queue.h"

namespace syncwrite::server {

class ReplicationClient;

struct ServerContext {
  std::unique_ptr<config::Configuration> server_config;
  std::string node_name;
  size_t max_connections = 0;
  size_t max_packet_size = 0;
  // connection_idle_time; zero: connections are never closed for idleness.
  std::chrono::seconds connection_idle_time{0};
  size_t max_send_queue_bytes = 0;
  size_t io_threads = 0;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  // The users connections authenticate as (the config's "users"). Empty: the
  // server is open, and no command needs authentication.
  std::unique_ptr<sasl::UserStore> users;
  // The users limited to some buckets (the config's "buckets" of a user):
  // name -> those buckets. A user not here may access every bucket
  // (mayAccessBucket, command.h).
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> user_buckets;
  // The cluster this node is one of (cluster_config.h), or none.
  std::optional<ClusterSpec> cluster;
  // The bucket a connection works in before SELECT_BUCKET (default_bucket),
  // or null.
  Bucket* default_bucket = nullptr;
  // The port the server listens on, for the cluster map; set before the I/O
  // threads start.
  uint16_t port = 0;

  std::unique_ptr<executor::ExecutorPool> pool;
  // In a cluster: this node's DCP connections to the active nodes of its
  // replica vbuckets (replication_client.h). A SET_VBUCKET that names a new
  // active for a replica vbucket adds one (replicate_from).
  mutable base::Mutex replication_mutex;
  std::vector<std::shared_ptr<ReplicationClient>> replication ABSL_GUARDED_BY(replication_mutex);
  // Makes replica vbucket `vbid` of `bucket` stream from `active` (and from
  // no other node). Set by the server in a cluster; empty otherwise.
  std::function<void(Bucket& bucket, vbucket::Vbid vbid, const std::string& active)> replicate_from;
  // Per I/O thread (indexed like the server's io_contexts): where its
  // connections' continuation turns wait (turn_queue.h), two posted at a
  // time (server.cc), and where their drains of late answers wait, the same
  // way.
  std::vector<std::unique_ptr<TurnQueue>> turns;
  std::vector<std::unique_ptr<TurnQueue>> drains;
  std::map<std::string, std::unique_ptr<Bucket>, std::less<>> buckets;

  std::atomic<uint64_t> connections{0};  // open now
  // Open now, per I/O thread (io_threads of them; the server places a new
  // connection on the thread with the fewest).
  std::vector<std::atomic<uint64_t>> io_thread_connections;
  // Accepted by the socket since start, including those then closed because
  // max_connections was reached (which rejected_connections also counts).
  std::atomic<uint64_t> total_connections{0};
  std::atomic<uint64_t> rejected_connections{0};  // closed on accept (max_connections)
  // The answers each I/O thread gave, by opcode and status (one table per
  // thread, bound at its start: metrics/op_counters.h).
  std::vector<std::unique_ptr<metrics::OpCounters>> op_counters;
  // Turns that stopped at Connection::kRequestsPerTurn with more buffered and
  // went on after the other connections' queued handlers (fairness).
  std::atomic<uint64_t> read_turns_yielded{0};
  // Times an I/O thread, busy for BusyYield::kSlice without sleeping, called
  // sched_yield (server/busy_yield.h); also when no thread was waiting.
  std::atomic<uint64_t> io_busy_yields{0};
  // Reads whose first turn waited in the TurnQueue, behind the turns already
  // waiting there, instead of running at once (Connection, "Fairness").
  std::atomic<uint64_t> read_turns_queued{0};
  // Closed after connection_idle_time without progress: silent (nothing
  // owed to it, nothing read) or stalled (an answer it did not read).
  std::atomic<uint64_t> idle_connections_closed{0};
  std::atomic<uint64_t> stalled_connections_closed{0};
  // Times a connection stopped reading because max_send_queue_bytes of its
  // answers were unsent, and the most any connection ever held unsent.
  std::atomic<uint64_t> send_queue_full{0};
  std::atomic<uint64_t> send_queue_max_bytes{0};

  // The bucket named `name`, or null.
  Bucket* findBucket(std::string_view name) const {
    auto it = buckets.find(name);
    return it == buckets.end() ? nullptr : it->second.get();
  }
};

}  // namespace syncwrite::server
