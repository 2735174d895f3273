// MetricsEndpoint: the HTTP endpoint Prometheus scrapes — GET /metrics in
// Prometheus's text exposition format, served by prometheus-cpp's Exposer
// (its own HTTP threads, off the I/O threads) from a MetricsCollector.
//
// With users (a non-empty UserStore), every request must carry HTTP basic
// credentials of one of them, checked as SASL PLAIN is (UserStore::checkPlain);
// anything else is answered 401 and reads nothing, as kv_engine's endpoint
// requires authentication. Without users it is open, as the MCBP port is.
//
// Lifetime: `context` must outlive the endpoint; destroying it stops the
// HTTP threads after the requests in progress.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <absl/status/statusor.h>

#include "server/server_context.h"

namespace prometheus {
class Exposer;
}

namespace syncwrite::server::metrics {

class MetricsCollector;

class MetricsEndpoint {
 public:
  // Listens on host:port (0: an ephemeral port). Unavailable, naming the
  // address and the cause, when it cannot listen.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> start(const std::string& host,
                                                                uint16_t port,
                                                                const ServerContext& context);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  uint16_t port() const noexcept { return port_; }

 private:
  MetricsEndpoint() = default;
  std::shared_ptr<MetricsCollector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  uint16_t port_ = 0;
};

}  // namespace syncwrite::server::metrics
