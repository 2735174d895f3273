// BucketDurability::Impl: the state behind BucketDurability, shared by its
// two source files — bucket_durability.cc (monitors, timeouts, the
// listeners, stats) and bucket_durability_replica.cc (the replica side:
// passive monitors, promotion, rollback). Internal: neither public nor
// installed; bucket_durability.cc's file comment gives the lock order.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include "base/mutex.h"
#include "durability/active_durability_monitor.h"
#include "durability/bucket_durability.h"
#include "durability/bucket_timeout_task.h"
#include "durability/passive_durability_monitor.h"
#include "durability/polling_timeout_task.h"

namespace syncwrite::durability {

struct BucketDurability::Impl {
  struct Slot {
    std::unique_ptr<ActiveDurabilityMonitor> monitor;
    vbucket::VBucket::ListenerId state_listener = 0;
  };

  Impl(std::string name, config::Configuration& config, vbucket::VBucketMap& map,
       executor::ExecutorPool& pool, const ReplicationTopology& topology, TimeoutClocks clocks);

  void applyModeLocked(TimeoutMode mode) ABSL_EXCLUSIVE_LOCKS_REQUIRED(tasks_mutex);
  void startTimerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(tasks_mutex);
  void stopTimerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(tasks_mutex);
  void startPollingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(tasks_mutex);
  void stopPollingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(tasks_mutex);
  void onStateChange(vbucket::VBucket& vb, vbucket::VBucketState old_state,
                     vbucket::VBucketState new_state);
  void onModeChange();
  void onIntervalChange();
  void onMaxVisitDurationChange();
  void onTimeoutSliceChange();
  void defer(ResolvedWrites&& resolved);
  // Replica vbucket `vbid` for `caller` (named in the error): InvalidArgument
  // past the map, FailedPrecondition when it is not a replica here.
  absl::StatusOr<vbucket::VBucket*> replicaVbucket(Vbid vbid, std::string_view caller) const;

  const std::string name;
  config::Configuration& config;
  vbucket::VBucketMap& map;
  executor::ExecutorPool& pool;
  const TimeoutClocks clocks;
  const clock::ClockRef visitor_clock;

  DurabilitySettings settings;
  // One set per mode (TimeoutMode's value), each given to that mode's task.
  std::array<TimeoutTaskCounters, 2> task_counters;
  TimeoutTaskCounters& countersOf(TimeoutMode m) { return task_counters[static_cast<size_t>(m)]; }
  // The vbuckets with SyncWrites in flight, kept by their monitors; what
  // both timeout mechanisms read instead of every vbucket.
  vbucket::VBucketSet in_flight;
  // Timeout tasks are unregistered at shutdown; completion tasks only at
  // destruction, so a write racing with shutdown() still gets its deferred
  // completion from a pool thread.
  executor::Taskable timeout_owner;
  executor::Taskable completion_owner;
  std::vector<Slot> slots;
  std::vector<config::Configuration::ListenerId> config_listeners;
  // Replica vbuckets' monitors, made at first use (passiveMonitor()).
  mutable base::Mutex passive_mutex;
  absl::flat_hash_map<Vbid, std::unique_ptr<PassiveDurabilityMonitor>> passive
      ABSL_GUARDED_BY(passive_mutex);
  PassiveAckListener passive_ack_listener;

  mutable base::Mutex tasks_mutex;
  std::atomic<TimeoutMode> mode;
  // Event-driven: the bucket's timer, attached to every monitor (null when
  // polling).
  std::shared_ptr<BucketTimeoutTask> timer ABSL_GUARDED_BY(tasks_mutex);
  std::shared_ptr<PollingTimeoutTask> polling ABSL_GUARDED_BY(tasks_mutex);
  // Passes of the polling tasks already stopped.
  uint64_t polling_passes_before ABSL_GUARDED_BY(tasks_mutex) = 0;
  uint64_t mode_switches ABSL_GUARDED_BY(tasks_mutex) = 0;
  bool shut_down ABSL_GUARDED_BY(tasks_mutex) = false;
  std::once_flag shutdown_once;  // shutdown()'s body runs once; later callers wait for it
};

}  // namespace syncwrite::durability
