// MetricsCollector: the server's metrics in Prometheus's data model, built
// when a scrape asks for them (docs/metrics.md lists every one).
//
// Collect() reads what the server counts anyway — each bucket's
// BucketDurability::stats() and commitLatency(), its memory, the connection
// counters — so serving metrics adds nothing to the paths that serve
// requests. Names follow kv_engine's Prometheus names (its stats.def.h, with
// the "kv_" prefix its exporter adds) where kv_engine has the metric, with a
// `bucket` label and, where it matters, `level`, `cause` or `mode`.
//
// Thread-safety: Collect() may run on any thread (prometheus-cpp's HTTP
// threads) while the server serves; what it reads is thread-safe to read.
// Lifetime: `context` must outlive the collector.
#pragma once

#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "server/server_context.h"

namespace syncwrite::server::metrics {

class MetricsCollector final : public prometheus::Collectable {
 public:
  explicit MetricsCollector(const ServerContext& context) : context_(context) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ServerContext& context_;
};

}  // namespace syncwrite::server::metrics
