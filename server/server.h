// Server: the syncwrite-server process — buckets, the listening socket, the
// I/O threads and the orderly shutdown.
//
// Threads:
//  - the caller of run() (main): sets up, waits for a stop request, shuts down;
//  - kIoThreads I/O threads ("mcbp_io0", ...), each running its own
//    boost::asio io_context (as memcached gives each worker thread its own
//    event base). A connection lives on one of them for its life (its
//    handlers posted to that io_context, serialised by its one thread and
//    so needing no strand): the one with the fewest open connections when it was
//    accepted. The simulated replicas are dealt to them in turn; the
//    acceptor and the signal handler run on the first. A handler posted to
//    the thread's own io_context stays on it (its private queue, no lock);
//    one posted from elsewhere (a late answer, a replica's ack) wakes it.
//    With one io_context shared by both threads, the threads woke each
//    other (0.75 futex calls per request at 1 in flight, against 0.17 now);
//    this layout served GET at 1.44-1.49x and SET at 1 in flight at
//    1.08-1.18x the ops/s of that one (docs/benchmarks.md, "One io_context
//    per I/O thread"). The price: while a thread waits for a core, its
//    connections wait with it, even if the other thread is idle (a 300k
//    timeout storm's bystander: docs/benchmarks.md, same section);
//  - the ExecutorPool's NonIO workers ("NonIoPool0", ...) and its timer
//    thread: the durability timeout tasks of every bucket.
// A SyncWrite resolves on whichever thread decided it (an I/O thread for an
// acknowledgement, a NonIO worker for a timeout) and its answer is posted to
// the connection's I/O thread.
//
// Shutdown (SIGINT, SIGTERM or requestStop()): stop accepting; tell every
// connection to stop reading and to close once everything it read is
// answered and sent; shut every bucket down (AmbiguousReason::kShutdown —
// each in-flight SyncWrite is answered SyncWriteAmbiguous); wait for the
// connections to drain (at most kDrainTimeout, then they are dropped with a
// log line); stop the I/O threads. run() then returns OK and main exits 0.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "base/mutex.h"
#include "server/connection.h"
#include "server/dispatcher.h"
#include "server/metrics/metrics_endpoint.h"
#include "server/options.h"
#include "server/replication_client.h"
#include "server/server_config.h"
#include "server/server_context.h"

namespace syncwrite::server {

// Where the acceptor accepts: a strand on the first I/O thread's io_context,
// and a socket there until place() moves it to its connection's I/O thread.
using AcceptStrand = boost::asio::strand<boost::asio::io_context::executor_type>;
using AcceptSocket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, AcceptStrand>;

class Server {
 public:
  static constexpr size_t kIoThreads = 2;
  static constexpr std::chrono::seconds kDrainTimeout{10};

  // Creates the executor pool and the buckets of `config`. An error (a bucket
  // whose chain is not a valid topology) builds nothing.
  static absl::StatusOr<std::unique_ptr<Server>> create(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Listens on `options.host`:`options.port`, writes options.port_file once
  // listening (to a temporary name, then renamed, so a reader never sees it
  // partly written), serves until a stop is requested, then shuts down as
  // the file comment says. Errors (cannot resolve, bind, listen or write the
  // port file) are returned before serving anything. Call once.
  absl::Status run(const ServerOptions& options);

  // Asks run() to shut down. Thread-safe; idempotent.
  void requestStop();

 private:
  Server();
  absl::Status listen(const ServerOptions& options);
  void doAccept();
  // The I/O thread the next connection goes to: the one with the fewest
  // open connections (ServerContext::io_thread_connections), the next in
  // turn among equals. On the accept strand.
  size_t pickIoThread();
  void onAccepted(const boost::system::error_code& error,
                  const std::shared_ptr<AcceptSocket>& accepted);
  // Moves the socket `accepted` (on the accept strand) onto the io_context
  // of I/O thread `io_thread`. On failure logs why, closes it and returns
  // nullopt.
  std::optional<IoSocket> place(AcceptSocket& accepted, size_t io_thread);
  void onConnectionClosed(Connection* connection);
  void shutdown();
  // In a cluster: one ReplicationClient per (bucket, active node) this node
  // holds replica vbuckets of, dealt to the I/O threads in turn, and each
  // bucket's passive ack listener routed to them. Started by run().
  void startReplication();
  // A ReplicationClient of `bucket` from node `active` for `vbids`, started
  // and listed in the context. Requires replication_mutex held.
  std::shared_ptr<ReplicationClient> startReplicationClient(Bucket& bucket,
                                                            const std::string& active,
                                                            std::vector<vbucket::Vbid> vbids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(context_.replication_mutex);
  // ServerContext::replicate_from.
  void replicateFrom(Bucket& bucket, vbucket::Vbid vbid, const std::string& active);

  // Which ReplicationClient streams each replica vbucket of a bucket, read
  // by the bucket's passive ack listener (the flusher's thread).
  class ReplicaRoute {
   public:
    explicit ReplicaRoute(size_t vbuckets) : clients_(vbuckets) {}
    void set(vbucket::Vbid vbid, const std::shared_ptr<ReplicationClient>& client) {
      base::MutexLock lock(mutex_);
      if (vbid < clients_.size()) clients_[vbid] = client;
    }
    std::shared_ptr<ReplicationClient> get(vbucket::Vbid vbid) const {
      base::MutexLock lock(mutex_);
      return vbid < clients_.size() ? clients_[vbid].lock() : nullptr;
    }

   private:
    mutable base::Mutex mutex_;
    std::vector<std::weak_ptr<ReplicationClient>> clients_ ABSL_GUARDED_BY(mutex_);
  };

  // One io_context per I/O thread, each run by that thread alone (see the
  // file comment). Declared first: destroyed last, after everything that
  // posts to them.
  std::vector<std::unique_ptr<boost::asio::io_context>> ios_;
  ServerContext context_;
  Dispatcher dispatcher_{context_};

  // The acceptor, its retry timer and the signal set live on one strand.
  AcceptStrand accept_strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  // The listening socket's protocol (IPv4 or IPv6), set by listen().
  boost::asio::ip::tcp protocol_ = boost::asio::ip::tcp::v4();
  boost::asio::steady_timer accept_retry_timer_;
  boost::asio::signal_set signals_;
  std::vector<std::thread> io_threads_;
  size_t next_io_ = 0;  // where pickIoThread() looks first; on the accept strand
  // Keeps each I/O thread in its io_context's run() while nothing is pending: after
  // SIGTERM a connection whose client left may have no I/O under way, yet
  // still be owed a SyncWrite's answer, which is posted to it later. Without
  // this, run() could return in between and the answer would never run.
  // Released after the drain (shutdown()).
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> io_work_;

  base::Mutex mutex_;
  std::condition_variable changed_;
  bool stop_requested_ ABSL_GUARDED_BY(mutex_) = false;
  struct OpenConnection {
    std::weak_ptr<Connection> connection;
    size_t io_thread;
  };
  std::unordered_map<Connection*, OpenConnection> connections_ ABSL_GUARDED_BY(mutex_);

  // The password of the cluster's replication_user (empty without users).
  std::string replication_password_;
  // prometheus_port, when configured; the endpoint starts in run() and stops
  // first in shutdown().
  std::optional<uint16_t> prometheus_port_;
  std::unique_ptr<metrics::MetricsEndpoint> metrics_;
  std::map<const Bucket*, std::shared_ptr<ReplicaRoute>> routes_
      ABSL_GUARDED_BY(context_.replication_mutex);
};

}  // namespace syncwrite::server
