#include "server/metrics/metrics_endpoint.h"

#include <exception>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>
#include <prometheus/exposer.h>

#include "server/metrics/metrics_collector.h"
#include "server/sasl/user_store.h"

namespace syncwrite::server::metrics {

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::start(
    const std::string& host, uint16_t port, const ServerContext& context) {
  // civetweb's form: an IPv6 address goes in brackets.
  const std::string address = host.find(':') != std::string::npos
                                  ? absl::StrCat("[", host, "]:", port)
                                  : absl::StrCat(host, ":", port);
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  try {
    // One HTTP thread: a scrape is a few kilobytes every few seconds.
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for Prometheus on ", address, ": ", e.what()));
  }
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot listen for Prometheus on ", address));
  }
  endpoint->port_ = static_cast<uint16_t>(ports.front());
  if (!context.users->empty()) {
    const sasl::UserStore* users = context.users.get();
    endpoint->exposer_->RegisterAuth(
        [users](const std::string& user, const std::string& password) {
          return users->checkPlain(user, password);
        },
        "syncwrite");
  }
  endpoint->collector_ = std::make_shared<MetricsCollector>(context);
  endpoint->exposer_->RegisterCollectable(endpoint->collector_);
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() {
  // The HTTP threads stop first: none is left reading the collector.
  exposer_.reset();
}

}  // namespace syncwrite::server::metrics
