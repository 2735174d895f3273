#include "server/server.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include <absl/strings/str_cat.h>
#include <boost/asio/post.hpp>

#include "server/log.h"
#include "server/replication_client.h"

namespace syncwrite::server {

namespace {

absl::Status writePortFile(const std::string& path, uint16_t port) {
  // Written under a temporary name and renamed: rename() is atomic, so a
  // reader polling for the file sees nothing or the whole port.
  const std::string temporary = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << port << '\n';
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write port file ", temporary));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", temporary, " to ", path, ": ", error.message()));
  }
  return absl::OkStatus();
}

std::vector<std::unique_ptr<boost::asio::io_context>> makeIoContexts(size_t count) {
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts;
  // Concurrency hint 1: one thread runs each, so a handler it posts to its
  // own io_context goes to that thread's private queue, without the lock.
  // That one thread is also what serialises a connection's handlers, which
  // have no strand (connection.h): a second thread in run() would race them.
  for (size_t i = 0; i < count; ++i) {
    contexts.push_back(std::make_unique<boost::asio::io_context>(1));
    // A timer's service opens the io_context's reactor (an epoll fd, an
    // eventfd and a timerfd), which outlives the timer. Opened here, the
    // process holds the same descriptors before its first connection as
    // after its last, rather than three more once a thread got its first
    // (the soak compares the counts: SoakSmoke failed on that step).
    boost::asio::steady_timer opens_the_reactor(*contexts.back());
  }
  return contexts;
}

}  // namespace

Server::Server()
    : ios_(makeIoContexts(kIoThreads)),
      accept_strand_(boost::asio::make_strand(*ios_.front())),
      acceptor_(accept_strand_),
      accept_retry_timer_(accept_strand_),
      signals_(accept_strand_) {}

Server::~Server() {
  requestStop();
  for (std::thread& thread : io_threads_) {
    if (thread.joinable()) thread.join();
  }
}

absl::StatusOr<std::unique_ptr<Server>> Server::create(ServerConfig config) {
  std::unique_ptr<Server> server(new Server());
  ServerContext& context = server->context_;
  context.server_config = std::move(config.server);
  const config::Configuration& server_config = *context.server_config;
  context.node_name = server_config.get(config::keys::kNodeName);
  context.users = std::make_unique<sasl::UserStore>(config.users);
  context.user_buckets = std::move(config.user_buckets);
  context.cluster = config.cluster;
  server->prometheus_port_ = config.prometheus_port;
  if (config.cluster) {
    if (auto it = config.users.find(config.cluster->replication_user); it != config.users.end()) {
      server->replication_password_ = it->second;
    }
  }
  if (context.users->empty()) {
    logLine(
        "warning: the config has no \"users\": every connection is served without "
        "authentication");
  }
  context.max_connections = server_config.get(config::keys::kMaxConnections);
  context.max_packet_size = server_config.get(config::keys::kMaxPacketSize);
  context.connection_idle_time =
      std::chrono::seconds(server_config.get(config::keys::kConnectionIdleTime));
  context.max_send_queue_bytes = server_config.get(config::keys::kMaxSendQueueBytes);
  context.io_threads = kIoThreads;
  context.io_thread_connections = std::vector<std::atomic<uint64_t>>(kIoThreads);
  // Each I/O thread queues its own connections' turns and drains, two of
  // each posted at a time. Two, not one, was measured when the threads
  // shared one io_context and one queue of 2 × kIoThreads: with one per
  // thread, 300 connections pipelining durable SETs ran at 0.94x the ops/s
  // of posting every turn, with two 1.01x (docs/benchmarks.md, "TurnQueue").
  for (size_t i = 0; i < kIoThreads; ++i) {
    context.turns.push_back(std::make_unique<TurnQueue>(2));
    context.drains.push_back(std::make_unique<TurnQueue>(2));
    context.op_counters.push_back(std::make_unique<metrics::OpCounters>());
  }
  context.pool = std::make_unique<executor::ExecutorPool>(
      executor::ExecutorPool::threadsFor(server_config.get(config::keys::kNumNonioThreads)));
  // The simulated replicas of every bucket are dealt to the I/O threads in
  // turn, so that two replicas' acks (and the commits they make) run on two
  // threads.
  size_t replicas_placed = 0;
  const auto replica_io = [&server, &replicas_placed]() -> boost::asio::io_context& {
    return *server->ios_[replicas_placed++ % kIoThreads];
  };
  for (BucketSpec& spec : config.buckets) {
    const std::string name = spec.name;
    auto bucket = Bucket::create(std::move(spec), context.node_name, *context.pool, replica_io,
                                 config.cluster ? &*context.cluster : nullptr);
    if (!bucket.ok()) return bucket.status();
    context.buckets.emplace(name, std::move(*bucket));
  }
  if (const std::string name = server_config.get(config::keys::kDefaultBucket); !name.empty()) {
    context.default_bucket = context.findBucket(name);
    if (context.default_bucket == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: default_bucket '", name, "' is not one of the buckets"));
    }
  }
  return server;
}

absl::Status Server::listen(const ServerOptions& options) {
  using boost::asio::ip::tcp;
  boost::system::error_code error;
  tcp::resolver resolver(*ios_.front());
  auto endpoints = resolver.resolve(options.host, std::to_string(options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, error);
  if (error || endpoints.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot resolve host '", options.host,
                                               "': ", error ? error.message() : "no address"));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  const std::string where = absl::StrCat(options.host, ":", options.port);
  protocol_ = endpoint.protocol();
  acceptor_.open(protocol_, error);
  if (!error) acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(boost::asio::socket_base::max_listen_connections, error);
  if (error)
    return absl::UnavailableError(absl::StrCat("cannot listen on ", where, ": ", error.message()));
  return absl::OkStatus();
}

absl::Status Server::run(const ServerOptions& options) {
  if (auto status = listen(options); !status.ok()) return status;
  const uint16_t port = acceptor_.local_endpoint().port();
  context_.port = port;  // before any I/O thread runs
  if (prometheus_port_) {
    auto endpoint = metrics::MetricsEndpoint::start(options.host, *prometheus_port_, context_);
    if (!endpoint.ok()) return endpoint.status();
    metrics_ = std::move(*endpoint);
    logLine(absl::StrCat("serving Prometheus metrics on http://", options.host, ":",
                         metrics_->port(), "/metrics",
                         context_.users->empty() ? " (no authentication: the config has no users)"
                                                 : " (HTTP basic auth as a configured user)"));
    if (options.port_file) {
      const std::string file = *options.port_file + ".prometheus";
      if (auto status = writePortFile(file, metrics_->port()); !status.ok()) return status;
    }
  }
  if (options.port_file) {
    if (auto status = writePortFile(*options.port_file, port); !status.ok()) return status;
  }
  logLine(absl::StrCat("listening on ", options.host, ":", port, " (node \"", context_.node_name,
                       "\", ", context_.buckets.size(), " bucket(s), ", kIoThreads,
                       " I/O threads, ", context_.pool->numThreads(executor::TaskGroup::kNonIO),
                       " NonIO threads, max_connections ", context_.max_connections, ")"));

  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.async_wait([this](const boost::system::error_code& error, int signal_number) {
    if (error) return;
    logLine(absl::StrCat("received ", signal_number == SIGINT ? "SIGINT" : "SIGTERM",
                         ": shutting down"));
    requestStop();
  });
  boost::asio::post(accept_strand_, [this] { doAccept(); });
  for (auto& io : ios_) io_work_.push_back(boost::asio::make_work_guard(*io));
  startReplication();

  for (size_t i = 0; i < kIoThreads; ++i) {
    io_threads_.emplace_back([this, i] {
      const std::string name = absl::StrCat("mcbp_io", i);
      pthread_setname_np(pthread_self(), name.c_str());
      metrics::OpCounters::bindThisThread(context_.op_counters[i].get());
      ios_[i]->run();
      metrics::OpCounters::bindThisThread(nullptr);
    });
  }

  {
    base::MutexLock lock(mutex_);
    lock.wait(changed_, [this] {
      mutex_.assertHeld();
      return stop_requested_;
    });
  }
  shutdown();
  return absl::OkStatus();
}

std::shared_ptr<ReplicationClient> Server::startReplicationClient(
    Bucket& bucket, const std::string& active, std::vector<vbucket::Vbid> vbids) {
  const ClusterSpec& cluster = *context_.cluster;
  const ClusterNode* node = cluster.find(active);
  if (node == nullptr) return nullptr;
  auto client = std::make_shared<ReplicationClient>(
      *ios_[context_.replication.size() % kIoThreads],
      ReplicationClient::Options{.bucket = &bucket,
                                 .this_node = context_.node_name,
                                 .active = *node,
                                 .user = context_.users->empty() ? "" : cluster.replication_user,
                                 .password = replication_password_,
                                 .vbuckets = std::move(vbids)});
  context_.replication.push_back(client);
  client->start();
  return client;
}

void Server::startReplication() {
  if (!context_.cluster) return;
  const ClusterSpec& cluster = *context_.cluster;
  base::MutexLock lock(context_.replication_mutex);
  for (auto& [name, bucket] : context_.buckets) {
    std::map<std::string, std::vector<vbucket::Vbid>> by_active;
    for (size_t id = 0; id < bucket->vbuckets().size(); ++id) {
      const auto vbid = static_cast<vbucket::Vbid>(id);
      if (bucket->vbuckets().at(vbid).state() != vbucket::VBucketState::kReplica) continue;
      by_active[cluster.chain(vbid, bucket->numReplicas()).front()].push_back(vbid);
    }
    auto route = std::make_shared<ReplicaRoute>(bucket->vbuckets().size());
    routes_[bucket.get()] = route;
    for (auto& [active, vbids] : by_active) {
      const std::vector<vbucket::Vbid> streamed = vbids;
      const auto client = startReplicationClient(*bucket, active, std::move(vbids));
      for (vbucket::Vbid vbid : streamed) route->set(vbid, client);
    }
    bucket->durability().setPassiveAckListener([route](vbucket::Vbid vbid, vbucket::Seqno hps) {
      if (auto client = route->get(vbid)) client->ackPersisted(vbid, hps);
    });
  }
  context_.replicate_from = [this](Bucket& bucket, vbucket::Vbid vbid, const std::string& active) {
    replicateFrom(bucket, vbid, active);
  };
}

void Server::replicateFrom(Bucket& bucket, vbucket::Vbid vbid, const std::string& active) {
  base::MutexLock lock(context_.replication_mutex);
  std::shared_ptr<ReplicationClient> target;
  for (const auto& client : context_.replication) {
    if (&client->bucket() != &bucket) continue;
    if (client->activeNode() == active) {
      target = client;
    } else {
      client->removeVbucket(vbid);
    }
  }
  if (target) {
    target->addVbucket(vbid);
  } else {
    target = startReplicationClient(bucket, active, {vbid});
  }
  if (auto it = routes_.find(&bucket); it != routes_.end()) it->second->set(vbid, target);
  logLine(absl::StrCat("bucket \"", bucket.name(), "\": vbucket ", vbid,
                       " is now replicated from node '", active, "'"));
}

void Server::requestStop() {
  {
    base::MutexLock lock(mutex_);
    stop_requested_ = true;
  }
  changed_.notify_all();
}

void Server::doAccept() {
  if (!acceptor_.is_open()) return;
  // Accepted on the acceptor's strand; placed on its I/O thread once there
  // (onAccepted), by the counts of that moment.
  auto socket = std::make_shared<AcceptSocket>(accept_strand_);
  acceptor_.async_accept(*socket, [this, socket](const boost::system::error_code& error) {
    onAccepted(error, socket);
  });
}

size_t Server::pickIoThread() {
  const auto open = [this](size_t thread) {
    return context_.io_thread_connections[thread].load(std::memory_order_relaxed);
  };
  size_t best = next_io_ % kIoThreads;
  for (size_t i = 1; i < kIoThreads; ++i) {
    const size_t candidate = (next_io_ + i) % kIoThreads;
    if (open(candidate) < open(best)) best = candidate;
  }
  next_io_ = best + 1;
  return best;
}

std::optional<IoSocket> Server::place(AcceptSocket& accepted, size_t io_thread) {
  const auto refuse = [](const char* step, const boost::system::error_code& error) {
    logLine(absl::StrCat("cannot hand an accepted connection to an I/O thread (", step,
                         "): ", error.message(), "; closing it"));
    return std::nullopt;
  };
  boost::system::error_code error;
  const AcceptSocket::native_handle_type handle = accepted.release(error);
  if (error) {
    boost::system::error_code ignored;
    accepted.close(ignored);
    return refuse("release", error);
  }
  std::optional<IoSocket> placed(std::in_place, ios_[io_thread]->get_executor());
  // The acceptor's protocol is the accepted socket's.
  placed->assign(protocol_, handle, error);
  if (error) {
    ::close(handle);  // released: nobody else owns it
    return refuse("assign", error);
  }
  return placed;
}

void Server::onAccepted(const boost::system::error_code& error,
                        const std::shared_ptr<AcceptSocket>& accepted) {
  if (!acceptor_.is_open() || error == boost::asio::error::operation_aborted) return;
  if (error) {
    // E.g. out of file descriptors: say so, and try again a little later
    // rather than spinning on the same error.
    logLine(absl::StrCat("accept failed: ", error.message(), "; retrying in 100 ms"));
    accept_retry_timer_.expires_after(std::chrono::milliseconds(100));
    accept_retry_timer_.async_wait([this](const boost::system::error_code& e) {
      if (!e) doAccept();
    });
    return;
  }
  context_.total_connections.fetch_add(1, std::memory_order_relaxed);
  boost::system::error_code ignored;
  if (context_.connections.load(std::memory_order_relaxed) >= context_.max_connections) {
    context_.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    logLine(absl::StrCat("connection refused: max_connections (", context_.max_connections,
                         ") reached"));
    accepted->close(ignored);
  } else if (const size_t io_thread = pickIoThread();
             std::optional<IoSocket> socket = place(*accepted, io_thread)) {
    socket->set_option(boost::asio::ip::tcp::no_delay(true), ignored);
    auto connection =
        std::make_shared<Connection>(std::move(*socket), io_thread, context_, dispatcher_,
                                     [this](Connection* closed) { onConnectionClosed(closed); });
    context_.connections.fetch_add(1, std::memory_order_relaxed);
    context_.io_thread_connections[io_thread].fetch_add(1, std::memory_order_relaxed);
    {
      base::MutexLock lock(mutex_);
      connections_.emplace(connection.get(), OpenConnection{connection, io_thread});
      if (stop_requested_) connection->beginShutdown();
    }
    connection->start();
  }
  doAccept();
}

void Server::onConnectionClosed(Connection* connection) {
  context_.connections.fetch_sub(1, std::memory_order_relaxed);
  {
    base::MutexLock lock(mutex_);
    if (auto it = connections_.find(connection); it != connections_.end()) {
      context_.io_thread_connections[it->second.io_thread].fetch_sub(1, std::memory_order_relaxed);
      connections_.erase(it);
    }
  }
  changed_.notify_all();
}

void Server::shutdown() {
  // 0. Scrapes end (each one reads the buckets).
  metrics_.reset();
  // 1. No new connections; no more signals to handle.
  boost::asio::post(accept_strand_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_timer_.cancel();
    signals_.cancel(ignored);
  });
  // The replicas' connections to other nodes close; nothing more is applied.
  {
    base::MutexLock lock(context_.replication_mutex);
    for (const auto& client : context_.replication) client->stop();
  }
  // 2. Every connection stops reading and closes once answered.
  {
    base::MutexLock lock(mutex_);
    for (auto& [raw, open] : connections_) {
      if (auto connection = open.connection.lock()) connection->beginShutdown();
    }
  }
  // 3. Every in-flight SyncWrite is answered ambiguous (the answers are
  // posted to the connections, which send them before closing).
  for (auto& [name, bucket] : context_.buckets) {
    bucket->shutdown(durability::AmbiguousReason::kShutdown);
  }
  // 4. Wait for the connections to send what they owe and close.
  {
    base::MutexLock lock(mutex_);
    if (!lock.waitFor(changed_, kDrainTimeout, [this] {
          mutex_.assertHeld();
          return connections_.empty();
        })) {
      logLine(absl::StrCat(connections_.size(), " connection(s) did not drain within ",
                           kDrainTimeout.count(), " s; dropping them"));
    }
  }
  io_work_.clear();
  for (auto& io : ios_) io->stop();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
  for (auto& queue : context_.turns) queue->clear();
  for (auto& queue : context_.drains) queue->clear();
  logLine("stopped");
}

}  // namespace syncwrite::server
