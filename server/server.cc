#include "server/server.h"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <absl/strings/str_cat.h>
#include <boost/asio/post.hpp>

#include "server/log.h"

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

}  // namespace

Server::Server()
    : accept_strand_(boost::asio::make_strand(io_)),
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
  // Two continuation turns per I/O thread: with one, 300 connections
  // pipelining durable SETs ran at 0.94x the ops/s of posting every turn
  // (a turn posted to a strand busy on the other thread leaves a thread
  // without one); with two, 1.01x (docs/benchmarks.md, "TurnQueue").
  context.turns = std::make_unique<TurnQueue>(2 * kIoThreads);
  context.drains = std::make_unique<TurnQueue>(2 * kIoThreads);
  context.pool = std::make_unique<executor::ExecutorPool>(
      executor::ExecutorPool::threadsFor(server_config.get(config::keys::kNumNonioThreads)));
  for (BucketSpec& spec : config.buckets) {
    const std::string name = spec.name;
    auto bucket = Bucket::create(std::move(spec), context.node_name, *context.pool, server->io_);
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
  tcp::resolver resolver(io_);
  auto endpoints = resolver.resolve(options.host, std::to_string(options.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, error);
  if (error || endpoints.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot resolve host '", options.host,
                                               "': ", error ? error.message() : "no address"));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  const std::string where = absl::StrCat(options.host, ":", options.port);
  acceptor_.open(endpoint.protocol(), error);
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
  io_work_.emplace(io_.get_executor());

  for (size_t i = 0; i < kIoThreads; ++i) {
    io_threads_.emplace_back([this, i] {
      const std::string name = absl::StrCat("mcbp_io", i);
      pthread_setname_np(pthread_self(), name.c_str());
      io_.run();
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

void Server::requestStop() {
  {
    base::MutexLock lock(mutex_);
    stop_requested_ = true;
  }
  changed_.notify_all();
}

void Server::doAccept() {
  if (!acceptor_.is_open()) return;
  auto socket = std::make_shared<StrandSocket>(boost::asio::make_strand(io_.get_executor()));
  acceptor_.async_accept(*socket, [this, socket](const boost::system::error_code& error) {
    onAccepted(error, socket);
  });
}

void Server::onAccepted(const boost::system::error_code& error,
                        const std::shared_ptr<StrandSocket>& socket) {
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
    socket->close(ignored);
  } else {
    socket->set_option(boost::asio::ip::tcp::no_delay(true), ignored);
    auto connection =
        std::make_shared<Connection>(std::move(*socket), context_, dispatcher_,
                                     [this](Connection* closed) { onConnectionClosed(closed); });
    context_.connections.fetch_add(1, std::memory_order_relaxed);
    {
      base::MutexLock lock(mutex_);
      connections_.emplace(connection.get(), connection);
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
    connections_.erase(connection);
  }
  changed_.notify_all();
}

void Server::shutdown() {
  // 1. No new connections; no more signals to handle.
  boost::asio::post(accept_strand_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_timer_.cancel();
    signals_.cancel(ignored);
  });
  // 2. Every connection stops reading and closes once answered.
  {
    base::MutexLock lock(mutex_);
    for (auto& [raw, weak] : connections_) {
      if (auto connection = weak.lock()) connection->beginShutdown();
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
  io_work_.reset();
  io_.stop();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
  context_.turns->clear();
  context_.drains->clear();
  logLine("stopped");
}

}  // namespace syncwrite::server
