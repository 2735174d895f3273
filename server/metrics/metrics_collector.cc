#include "server/metrics/metrics_collector.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "durability/bucket_durability.h"
#include "durability/level.h"
#include "server/bucket.h"
#include "server/metrics/op_counters.h"
#include "server/protocol/opcode.h"
#include "server/protocol/status.h"
#include "vbucket/bucket_memory.h"

namespace syncwrite::server::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr durability::Level kLevels[] = {durability::Level::kMajority,
                                         durability::Level::kMajorityAndPersistOnMaster,
                                         durability::Level::kPersistToMajority};
constexpr durability::TimeoutMode kModes[] = {durability::TimeoutMode::kEventDriven,
                                              durability::TimeoutMode::kPolling};
// The causes a client is told SyncWriteAmbiguous for, as `cause` labels.
constexpr durability::AmbiguousReason kReasons[] = {
    durability::AmbiguousReason::kTimeout, durability::AmbiguousReason::kLeftActive,
    durability::AmbiguousReason::kBucketDeleted, durability::AmbiguousReason::kShutdown,
    durability::AmbiguousReason::kFlushed};

MetricFamily family(std::string name, std::string help, MetricType type) {
  return MetricFamily{std::move(name), std::move(help), type, {}};
}

ClientMetric labelled(std::vector<ClientMetric::Label> labels) {
  ClientMetric m;
  m.label = std::move(labels);
  return m;
}

void addCounter(MetricFamily& f, std::vector<ClientMetric::Label> labels, uint64_t value) {
  ClientMetric m = labelled(std::move(labels));
  m.counter.value = static_cast<double>(value);
  f.metric.push_back(std::move(m));
}

void addGauge(MetricFamily& f, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m = labelled(std::move(labels));
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

// `counts[i]` (not cumulative) under upper edge `edge_seconds(i)`; the last
// count is the open bucket (+Inf).
template <typename Counts, typename Edge>
void addHistogram(MetricFamily& f, std::vector<ClientMetric::Label> labels, const Counts& counts,
                  double sum_seconds, Edge edge_seconds) {
  ClientMetric m = labelled(std::move(labels));
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    const double edge =
        i + 1 == counts.size() ? std::numeric_limits<double>::infinity() : edge_seconds(i);
    m.histogram.bucket.push_back({cumulative, edge});
  }
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = sum_seconds;
  f.metric.push_back(std::move(m));
}

std::string levelName(durability::Level level) { return std::string(durability::toString(level)); }

}  // namespace

std::vector<MetricFamily> MetricsCollector::Collect() const {
  // kv_engine's names (include/statistics/stats.def.h; its exporter adds
  // "kv_" and, for durations, "_seconds").
  MetricFamily accepted = family("kv_vb_active_sync_write_accepted_count",
                                 "SyncWrites accepted by the active vbuckets", MetricType::Counter);
  MetricFamily committed =
      family("kv_vb_active_sync_write_committed_count",
             "SyncWrites committed by the active vbuckets (promoted prepares included)",
             MetricType::Counter);
  MetricFamily aborted =
      family("kv_vb_active_sync_write_aborted_count",
             "SyncWrites aborted by the active vbuckets, for any reason", MetricType::Counter);
  MetricFamily latency = family(
      "kv_sync_write_commit_duration_seconds",
      "SyncWrite latency from acceptance to commit (writes with a client)", MetricType::Histogram);
  // syncwrite's own.
  MetricFamily ambiguous =
      family("kv_sync_write_ambiguous_count", "Clients answered SyncWriteAmbiguous, by cause",
             MetricType::Counter);
  MetricFamily pending = family("kv_sync_writes_pending",
                                "SyncWrites accepted and not resolved yet", MetricType::Gauge);
  MetricFamily lateness =
      family("kv_durability_timeout_lateness_seconds",
             "How long after their deadline timed-out SyncWrites were answered (upper bounds)",
             MetricType::Histogram);
  MetricFamily task_runs =
      family("kv_durability_timeout_task_runs", "Runs of the bucket's timeout task, by mode",
             MetricType::Counter);
  MetricFamily plain =
      family("kv_plain_write_count", "Writes without durability committed", MetricType::Counter);
  MetricFamily refused =
      family("kv_write_refused_count", "Writes refused (any status but success or pending)",
             MetricType::Counter);
  MetricFamily mem_used =
      family("kv_mem_used_bytes", "Memory the bucket accounts for", MetricType::Gauge);
  MetricFamily max_size =
      family("kv_ep_max_size_bytes", "The bucket's memory quota", MetricType::Gauge);
  MetricFamily checkpoint = family("kv_ep_checkpoint_memory_bytes",
                                   "Memory of the bucket's checkpoints", MetricType::Gauge);
  MetricFamily checkpoint_quota = family("kv_checkpoint_memory_quota_bytes",
                                         "The checkpoint share of the quota", MetricType::Gauge);
  MetricFamily tmp_oom =
      family("kv_ep_tmp_oom_errors", "Writes refused Etmpfail because the bucket was at its quota",
             MetricType::Counter);
  MetricFamily curr_items =
      family("kv_curr_items", "Items in the bucket's active vbuckets", MetricType::Gauge);
  MetricFamily unacked =
      family("kv_replica_sync_writes_unacked",
             "Tracked SyncWrites a replica has not acknowledged yet", MetricType::Gauge);
  MetricFamily ack_lag = family(
      "kv_replica_ack_seqno_lag",
      "Seqnos a replica's acks are behind the last prepares of the active vbuckets it replicates",
      MetricType::Gauge);
  MetricFamily ack_latency =
      family("kv_replica_ack_duration_seconds",
             "From a prepare sent to a replica over DCP to its DCP_SEQNO_ACKNOWLEDGED",
             MetricType::Histogram);

  for (const auto& [name, bucket] : context_.buckets) {
    const durability::BucketDurability& d = bucket->durability();
    const durability::DurabilityStats s = d.stats();
    for (const durability::Level level : kLevels) {
      const auto l = static_cast<size_t>(level);
      const std::vector<ClientMetric::Label> labels{{"bucket", name}, {"level", levelName(level)}};
      addCounter(accepted, labels, s.accepted_by_level[l]);
      addCounter(committed, labels, s.committed_by_level[l]);
      addCounter(aborted, labels, s.aborted_by_level[l]);
      const durability::CommitLatency::Snapshot took = d.commitLatency(level);
      addHistogram(latency, labels, took.counts, static_cast<double>(took.sum_ns) / 1e9,
                   [](size_t i) {
                     return static_cast<double>(durability::CommitLatency::kEdgesMicros[i]) / 1e6;
                   });
    }
    for (const durability::AmbiguousReason reason : kReasons) {
      addCounter(ambiguous,
                 {{"bucket", name}, {"cause", std::string(durability::toString(reason))}},
                 s.ambiguous_by_reason[static_cast<size_t>(reason)]);
    }
    addGauge(pending, {{"bucket", name}}, static_cast<double>(s.in_flight));
    for (const durability::TimeoutMode mode : kModes) {
      const auto m = static_cast<size_t>(mode);
      const std::vector<ClientMetric::Label> labels{
          {"bucket", name}, {"mode", std::string(durability::toString(mode))}};
      addCounter(task_runs, labels, s.timeout_task_runs_by_mode[m]);
      const durability::TimeoutLateness::Snapshot& late = s.timeout_lateness_by_mode[m];
      addHistogram(
          lateness, labels, late.counts, static_cast<double>(late.sum_ns) / 1e9, [](size_t i) {
            return static_cast<double>(durability::TimeoutLateness::upperEdgeMicros(i)) / 1e6;
          });
    }
    for (const auto& [replica, count] : d.unackedByReplica()) {
      addGauge(unacked, {{"bucket", name}, {"replica", replica}}, static_cast<double>(count));
    }
    for (const auto& [replica, lag] : d.ackLagByReplica()) {
      addGauge(ack_lag, {{"bucket", name}, {"replica", replica}}, static_cast<double>(lag));
    }
    for (const auto& [replica, histogram] : bucket->replicaAckLatencies().all()) {
      for (const durability::Level level : kLevels) {
        const durability::CommitLatency::Snapshot took = histogram->snapshot(level);
        addHistogram(ack_latency,
                     {{"bucket", name}, {"replica", replica}, {"level", levelName(level)}},
                     took.counts, static_cast<double>(took.sum_ns) / 1e9, [](size_t i) {
                       return static_cast<double>(durability::CommitLatency::kEdgesMicros[i]) / 1e6;
                     });
      }
    }
    addCounter(plain, {{"bucket", name}}, s.plain_writes);
    addCounter(refused, {{"bucket", name}}, s.refused);

    const vbucket::BucketMemory& memory = bucket->memory();
    const vbucket::MemoryLimits limits = memory.limits();
    addGauge(mem_used, {{"bucket", name}}, static_cast<double>(memory.memUsed()));
    addGauge(max_size, {{"bucket", name}}, static_cast<double>(limits.quota));
    addGauge(checkpoint, {{"bucket", name}}, static_cast<double>(memory.checkpointBytes()));
    addGauge(checkpoint_quota, {{"bucket", name}}, static_cast<double>(limits.checkpoint_quota));
    addCounter(tmp_oom, {{"bucket", name}}, memory.writesRefused());
    size_t items = 0;
    for (size_t id = 0; id < bucket->vbuckets().size(); ++id) {
      const vbucket::VBucket& vb = bucket->vbuckets().at(static_cast<vbucket::Vbid>(id));
      if (vb.state() == vbucket::VBucketState::kActive) items += vb.hashTable().size();
    }
    addGauge(curr_items, {{"bucket", name}}, static_cast<double>(items));
  }

  MetricFamily connections =
      family("kv_curr_connections", "Client connections open now", MetricType::Gauge);
  addGauge(connections, {},
           static_cast<double>(context_.connections.load(std::memory_order_relaxed)));
  MetricFamily total_connections = family(
      "kv_total_connections", "Client connections accepted since start", MetricType::Counter);
  addCounter(total_connections, {}, context_.total_connections.load(std::memory_order_relaxed));
  MetricFamily rejected = family(
      "kv_rejected_conns", "Connections closed at accept (max_connections)", MetricType::Counter);
  addCounter(rejected, {}, context_.rejected_connections.load(std::memory_order_relaxed));

  MetricFamily ops =
      family("kv_mcbp_ops", "Requests answered, by opcode and by the answer's status",
             MetricType::Counter);
  std::vector<const OpCounters*> tables;
  for (const auto& table : context_.op_counters) tables.push_back(table.get());
  for (const OpCounters::Total& t : OpCounters::total(tables)) {
    addCounter(
        ops,
        {{"opcode", std::string(protocol::toString(static_cast<protocol::Opcode>(t.opcode)))},
         {"status", t.status ? std::string(protocol::toString(*t.status)) : "Other"}},
        t.count);
  }

  std::vector<MetricFamily> out;
  for (
      MetricFamily* f :
      {&accepted,  &committed,  &aborted, &latency,  &ambiguous,   &pending,     &lateness,
       &task_runs, &plain,      &refused, &mem_used, &max_size,    &checkpoint,  &checkpoint_quota,
       &tmp_oom,   &curr_items, &unacked, &ack_lag,  &ack_latency, &connections, &total_connections,
       &rejected,  &ops}) {
    out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace syncwrite::server::metrics
