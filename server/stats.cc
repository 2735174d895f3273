#include "server/stats.h"

#include <unistd.h>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include "durability/timeout_mode.h"
#include "server/allocator.h"
#include "server/replication_client.h"
#include "server/version.h"

namespace syncwrite::server {
namespace {

std::string text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

StatList generalStats(const ServerContext& context) {
  const auto uptime = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::steady_clock::now() - context.started);
  StatList stats = {
      {"pid", absl::StrCat(::getpid())},
      {"uptime", absl::StrCat(uptime.count())},
      {"version", std::string(serverNameAndVersion())},
      {"allocator", allocatorName()},
      {"node_name", context.node_name},
      {"buckets", absl::StrCat(context.buckets.size())},
      {"connections", absl::StrCat(context.connections.load(std::memory_order_relaxed))},
      {"total_connections",
       absl::StrCat(context.total_connections.load(std::memory_order_relaxed))},
      {"rejected_connections",
       absl::StrCat(context.rejected_connections.load(std::memory_order_relaxed))},
      {"read_turns_yielded",
       absl::StrCat(context.read_turns_yielded.load(std::memory_order_relaxed))},
      {"io_busy_yields", absl::StrCat(context.io_busy_yields.load(std::memory_order_relaxed))},
      {"read_turns_queued",
       absl::StrCat(context.read_turns_queued.load(std::memory_order_relaxed))},
      {"idle_connections_closed",
       absl::StrCat(context.idle_connections_closed.load(std::memory_order_relaxed))},
      {"stalled_connections_closed",
       absl::StrCat(context.stalled_connections_closed.load(std::memory_order_relaxed))},
      {"send_queue_full", absl::StrCat(context.send_queue_full.load(std::memory_order_relaxed))},
      {"send_queue_max_bytes",
       absl::StrCat(context.send_queue_max_bytes.load(std::memory_order_relaxed))},
      {"io_threads", absl::StrCat(context.io_threads)},
      {"executor_nonio_threads",
       absl::StrCat(context.pool->numThreads(executor::TaskGroup::kNonIO))},
  };
  for (size_t i = 0; i < context.io_thread_connections.size(); ++i) {
    stats.emplace_back(
        absl::StrCat("mcbp_io", i, "_connections"),
        absl::StrCat(context.io_thread_connections[i].load(std::memory_order_relaxed)));
  }
  // A cluster node's replica side: its DCP connections to the active nodes.
  uint64_t connects = 0, streams = 0, items = 0, acks = 0, rollbacks = 0;
  base::MutexLock lock(context.replication_mutex);
  for (const auto& client : context.replication) {
    connects += client->connects();
    streams += client->streamsOpen();
    items += client->itemsReceived();
    acks += client->acksSent();
    rollbacks += client->rollbacks();
  }
  stats.emplace_back("replication_connections", absl::StrCat(context.replication.size()));
  stats.emplace_back("replication_connects", absl::StrCat(connects));
  stats.emplace_back("replication_streams", absl::StrCat(streams));
  stats.emplace_back("replication_items_received", absl::StrCat(items));
  stats.emplace_back("replication_acks_sent", absl::StrCat(acks));
  stats.emplace_back("replication_rollbacks", absl::StrCat(rollbacks));
  return stats;
}

StatList durabilityStats(const Bucket& bucket) {
  const nlohmann::json json = durabilityStatsJson(bucket.durability().stats());
  StatList stats;
  for (const auto& [name, value] : json.items()) stats.emplace_back(name, text(value));
  stats.emplace_back("durability_json", json.dump());
  return stats;
}

StatList configStats(const Bucket& bucket) {
  StatList stats;
  const nlohmann::json values = bucket.config().toJson();
  for (const auto& [key, value] : values.items()) {
    stats.emplace_back(key, text(value));
  }
  return stats;
}

StatList taskStats(const ServerContext& context) {
  uint64_t runs_total = 0;
  uint64_t tasks_total = 0;
  StatList per_bucket;
  for (const auto& [name, bucket] : context.buckets) {
    const durability::DurabilityStats s = bucket->durability().stats();
    runs_total += s.timeout_task_runs;
    tasks_total += s.timeout_tasks;
    per_bucket.emplace_back(absl::StrCat(name, ":timeout_task_runs"),
                            absl::StrCat(s.timeout_task_runs));
    per_bucket.emplace_back(absl::StrCat(name, ":timeout_tasks"), absl::StrCat(s.timeout_tasks));
    per_bucket.emplace_back(absl::StrCat(name, ":timeout_mode"),
                            std::string(durability::toString(s.mode)));
    per_bucket.emplace_back(absl::StrCat(name, ":polling_passes"), absl::StrCat(s.polling_passes));
  }
  StatList stats{
      {"timeout_task_runs_total", absl::StrCat(runs_total)},
      {"timeout_tasks_total", absl::StrCat(tasks_total)},
      {"executor_nonio_threads",
       absl::StrCat(context.pool->numThreads(executor::TaskGroup::kNonIO))},
  };
  stats.insert(stats.end(), per_bucket.begin(), per_bucket.end());
  return stats;
}

StatList memoryStats(const Bucket& bucket) {
  const vbucket::BucketMemory& m = bucket.memory();
  const vbucket::MemoryLimits limits = m.limits();
  const vbucket::RecoveryStats r = bucket.recoveryStats();
  size_t items = 0;
  size_t checkpoints = 0;
  for (size_t id = 0; id < bucket.vbuckets().size(); ++id) {
    const vbucket::CheckpointStats s =
        bucket.vbuckets().at(static_cast<vbucket::Vbid>(id)).checkpointManager().stats();
    items += s.num_items;
    checkpoints += s.num_checkpoints;
  }
  StatList stats{
      {"mem_used", absl::StrCat(m.memUsed())},
      {"max_size", absl::StrCat(limits.quota)},
      {"item_bytes", absl::StrCat(m.itemBytes())},
      {"index_bytes", absl::StrCat(m.indexBytes())},
      {"checkpoint_memory", absl::StrCat(m.checkpointBytes())},
      {"checkpoint_memory_quota", absl::StrCat(limits.checkpoint_quota)},
      {"checkpoint_memory_upper_mark", absl::StrCat(limits.upper_mark)},
      {"checkpoint_memory_lower_mark", absl::StrCat(limits.lower_mark)},
      {"checkpoint_items", absl::StrCat(items)},
      {"checkpoints", absl::StrCat(checkpoints)},
      {"checkpoint_items_expelled", absl::StrCat(r.items_expelled)},
      {"checkpoints_removed", absl::StrCat(r.checkpoints_removed)},
      {"checkpoint_bytes_recovered", absl::StrCat(r.bytes_freed)},
      {"memory_recovery_runs", absl::StrCat(r.runs)},
      {"memory_recovery_runs_above_upper_mark", absl::StrCat(r.runs_above_upper_mark)},
      {"writes_refused_for_memory", absl::StrCat(m.writesRefused())},
  };
  if (const vbucket::Flusher* flusher = bucket.flusher(); flusher != nullptr) {
    // How far behind the head the flusher's cursors are, and what it did.
    stats.emplace_back("flusher_items_queued", absl::StrCat(flusher->itemsQueued()));
    stats.emplace_back("flusher_batches", absl::StrCat(flusher->batches()));
    stats.emplace_back("flusher_items_flushed", absl::StrCat(flusher->itemsFlushed()));
    stats.emplace_back("flusher_paused", flusher->paused() ? "true" : "false");
    stats.emplace_back("flusher_write_failures", absl::StrCat(flusher->writeFailures()));
    stats.emplace_back("flusher_failing", flusher->failing() ? "true" : "false");
  }
  // Each simulated replica's stream: how far behind the head its cursor is.
  for (const auto& replica : bucket.simulatedReplicas()) {
    stats.emplace_back(absl::StrCat("replica:", replica->name(), ":items_queued"),
                       absl::StrCat(replica->itemsQueued()));
  }
  return stats;
}

// kv_engine's "vbucket-details [VB]" at its durability detail level
// (VBucket::_addStats): vb_N = the state, vb_N:high_seqno,
// vb_N:high_prepared_seqno (what this node acked as the vbucket's replica),
// vb_N:topology (the chain JSON). The stats a failover reads to pick the
// replica to promote. InvalidArgument for a VB that is not a number of the map.
absl::StatusOr<StatList> vbucketDetails(const Bucket& bucket, std::string_view which) {
  const vbucket::VBucketMap& map = bucket.vbuckets();
  size_t first = 0;
  size_t last = map.size();
  if (!which.empty()) {
    uint32_t vb = 0;
    if (!absl::SimpleAtoi(absl::string_view(which.data(), which.size()), &vb) || vb >= map.size()) {
      return absl::InvalidArgumentError(absl::StrCat("vbucket-details: no vbucket '",
                                                     std::string(which), "' (the bucket has ",
                                                     map.size(), ")"));
    }
    first = vb;
    last = first + 1;
  }
  StatList stats;
  for (size_t id = first; id < last; ++id) {
    const auto vbid = static_cast<vbucket::Vbid>(id);
    const vbucket::VBucket& vb = map.at(vbid);
    const std::string prefix = absl::StrCat("vb_", id);
    stats.emplace_back(prefix, std::string(vbucket::toString(vb.state())));
    stats.emplace_back(absl::StrCat(prefix, ":high_seqno"), absl::StrCat(vb.highSeqno()));
    stats.emplace_back(absl::StrCat(prefix, ":high_prepared_seqno"),
                       absl::StrCat(bucket.durability().replicaHighPreparedSeqno(vbid)));
    stats.emplace_back(absl::StrCat(prefix, ":topology"),
                       bucket.durability().topology(vbid).toJson().dump());
  }
  return stats;
}

}  // namespace

nlohmann::json durabilityStatsJson(const durability::DurabilityStats& s) {
  // nlohmann's object keeps keys sorted; the STAT answer follows that order.
  return nlohmann::json{
      {"durability_mode", std::string(durability::toString(s.mode))},
      {"sync_writes_in_flight", s.in_flight},
      {"sync_writes_committed", s.committed},
      {"sync_writes_aborted_timeout", s.aborted_timeout},
      {"sync_writes_ambiguous_other", s.ambiguous_other},
      {"sync_writes_aborted_other", s.aborted_other},
      {"sync_writes_answered_behind_head", s.answered_behind_head},
      {"sync_writes_committed_after_answer", s.committed_after_answer},
      {"sync_writes_recommitted", s.recommitted},
      {"plain_writes", s.plain_writes},
      {"writes_refused", s.refused},
      {"timeout_task_runs", s.timeout_task_runs},
      {"timeout_rearms", s.timeout_rearms},
      {"timeout_slices_yielded", s.timeout_slices_yielded},
      {"timeout_late_p50_us", s.timeout_late_p50_us},
      {"timeout_late_p99_us", s.timeout_late_p99_us},
      {"timeout_late_max_us", s.timeout_late_max_us},
      {"timeout_mode_switches", s.mode_switches},
      {"timeout_tasks", s.timeout_tasks},
      {"polling_passes", s.polling_passes},
  };
}

// The process's malloc and, for tcmalloc, where its bytes are (kv_engine's
// memcached answers "stats allocator" with its allocator's report too).
StatList allocatorStats() {
  StatList stats{{"allocator", allocatorName()}};
  for (const auto& [name, value] : allocatorProperties()) {
    stats.emplace_back(name, absl::StrCat(value));
  }
  return stats;
}

// A couchbase bucket's warmup, with kv_engine's stat names
// (engines/ep/src/warmup.cc, Warmup::addStats) and ours for the prepares.
// Warmup runs before the server listens, so a client sees it complete.
absl::StatusOr<StatList> warmupStats(const Bucket& bucket) {
  if (bucket.store() == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("bucket \"", bucket.name(), "\" is ephemeral: it has no warmup"));
  }
  const WarmupStats& w = bucket.warmupStats();
  return StatList{
      {"ep_warmup_thread", "complete"},
      {"ep_warmup_state", "done"},
      {"ep_warmup_key_count", absl::StrCat(w.documents)},
      {"ep_warmup_value_count", absl::StrCat(w.documents)},
      {"ep_warmup_outstanding_prepares", absl::StrCat(w.prepares)},
      {"ep_warmup_vbuckets", absl::StrCat(w.vbuckets)},
      {"ep_warmup_time", absl::StrCat(w.took.count())},  // µs, as kv_engine's
  };
}

absl::StatusOr<StatList> collectStats(const ServerContext& context, Bucket* selected,
                                      std::string_view group) {
  if (group.empty()) return generalStats(context);
  if (group == "tasks") return taskStats(context);
  if (group == "allocator") return allocatorStats();
  constexpr std::string_view kVbucketDetails = "vbucket-details";
  const bool details =
      group.substr(0, kVbucketDetails.size()) == kVbucketDetails &&
      (group.size() == kVbucketDetails.size() || group[kVbucketDetails.size()] == ' ');
  if (details || group == "durability" || group == "config" || group == "memory" ||
      group == "warmup") {
    if (selected == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("STAT ", std::string(group), " needs a bucket: send SELECT_BUCKET first"));
    }
    if (details) {
      std::string_view which = group.substr(kVbucketDetails.size());
      while (!which.empty() && which.front() == ' ') which.remove_prefix(1);
      return vbucketDetails(*selected, which);
    }
    if (group == "memory") return memoryStats(*selected);
    if (group == "warmup") return warmupStats(*selected);
    return group == "durability" ? durabilityStats(*selected) : configStats(*selected);
  }
  return absl::NotFoundError(absl::StrCat("unknown stat group '", std::string(group),
                                          "' (known: \"\", allocator, durability, config, memory, "
                                          "tasks, vbucket-details [VB], warmup)"));
}

}  // namespace syncwrite::server
