// Stats: the STAT groups syncwrite-server answers, as (name, value) pairs.
//
//   ""           general: pid, uptime (s), version, node_name, buckets,
//                connections (open now), total_connections,
//                rejected_connections, io_threads, executor_nonio_threads.
//   "durability" the selected bucket's BucketDurability::stats():
//                durability_mode, sync_writes_in_flight, sync_writes_committed,
//                sync_writes_aborted_timeout, sync_writes_ambiguous_other,
//                sync_writes_aborted_other,
//                sync_writes_answered_behind_head,
//                sync_writes_committed_after_answer,
//                plain_writes, writes_refused, timeout_task_runs,
//                timeout_rearms, timeout_mode_switches, timeout_tasks,
//                polling_passes; and durability_json, the same as one JSON
//                object (numbers as numbers).
//   "config"     every key of the selected bucket with its current value.
//   "memory"     the selected bucket's memory (vbucket/bucket_memory.h):
//                mem_used, max_size, item_bytes, index_bytes,
//                checkpoint_memory, checkpoint_memory_quota,
//                checkpoint_memory_upper_mark, checkpoint_memory_lower_mark
//                (bytes), checkpoint_items, checkpoints,
//                checkpoint_items_expelled, checkpoints_removed,
//                checkpoint_bytes_recovered, memory_recovery_runs,
//                memory_recovery_runs_above_upper_mark,
//                writes_refused_for_memory; a couchbase bucket's
//                flusher_items_queued (records not on disk yet),
//                flusher_batches, flusher_items_flushed, flusher_paused,
//                flusher_write_failures (kv_engine's ep_item_commit_failed),
//                flusher_failing (the last write failed; it is retried); and
//                replica:<name>:items_queued for each simulated replica's
//                stream. O(vbuckets).
//   "vbucket-details [VB]"  per vbucket of the selected bucket (or VB only):
//                vb_N (its state), vb_N:high_seqno, vb_N:high_prepared_seqno
//                (as its replica), vb_N:topology (chain JSON). O(vbuckets).
//   "tasks"      needs no selected bucket (the idle-CPU harness reads it on a
//                bare connection): timeout_task_runs_total,
//                timeout_tasks_total, executor_nonio_threads, and per bucket
//                <bucket>:timeout_task_runs, <bucket>:timeout_tasks,
//                <bucket>:timeout_mode, <bucket>:polling_passes.
// The names are an interface (the idle-CPU harness, operators' scripts).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/status/statusor.h>
#include <nlohmann/json.hpp>

#include "durability/bucket_durability.h"
#include "server/bucket.h"
#include "server/server_context.h"

namespace syncwrite::server {

using StatList = std::vector<std::pair<std::string, std::string>>;

// The stats of `group`. NotFound for an unknown group; FailedPrecondition
// (saying to send SELECT_BUCKET first) for a bucket's group ("durability",
// "config", "memory", "vbucket-details", "warmup") with `selected` null;
// NotFound for "warmup" of an ephemeral bucket;
// InvalidArgument for a vbucket-details VB the bucket does not have.
absl::StatusOr<StatList> collectStats(const ServerContext& context, Bucket* selected,
                                      std::string_view group);

// One bucket's durability stats as a JSON object (the durability_json stat).
nlohmann::json durabilityStatsJson(const durability::DurabilityStats& stats);

}  // namespace syncwrite::server
