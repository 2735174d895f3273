// BucketDurability: monitors per vbucket, the timeout mechanism of the
// configured mode, and the listeners that keep both current.
//
// Locks, in the order they may be taken:
//   tasks_mutex (which timeout tasks exist, the mode)  →  a monitor's lock
//   →  the executor's and the vbucket's internal locks.
// Completions are notified after every one of them is released.
#include "durability/bucket_durability.h"

#include <mutex>
#include <utility>
#include <vector>

#include "durability/active_durability_monitor.h"
#include "durability/config_values.h"
#include "durability/polling_timeout_task.h"
#include "durability/vbucket_timeout_task.h"

namespace syncwrite::durability {

namespace {

// Notifies, on a pool thread, the completions of SyncWrites that the call
// adding them already resolved. If the task never runs (the pool dropped it
// at shutdown), its destructor notifies them: nothing is lost.
class CompletionTask final : public executor::Task {
 public:
  CompletionTask(executor::Taskable& owner, ResolvedWrites writes)
      : Task(owner, "durability completions"), writes_(std::move(writes)) {}
  bool run() override {
    writes_.notify();
    return false;
  }

 private:
  ResolvedWrites writes_;
};

namespace keys = config::keys;

TimeoutMode modeOf(const config::Configuration& config) {
  return timeoutModeOf(config.get(keys::kDurabilityTimeoutMode));
}

}  // namespace

struct BucketDurability::Impl {
  struct Slot {
    std::unique_ptr<ActiveDurabilityMonitor> monitor;
    std::shared_ptr<VBucketTimeoutTask> timer;  // event-driven, active only; tasks_mutex
    vbucket::VBucket::ListenerId state_listener = 0;
  };

  Impl(std::string name, config::Configuration& config, vbucket::VBucketMap& map,
       executor::ExecutorPool& pool, ReplicationTopology topology, clock::ClockRef clock);

  void applyModeLocked(TimeoutMode mode);
  void startTimerLocked(Slot& slot);
  void stopTimerLocked(Slot& slot);
  void startPollingLocked();
  void stopPollingLocked();
  void onStateChange(vbucket::VBucket& vb, vbucket::VBucketState old_state,
                     vbucket::VBucketState new_state);
  void onModeChange();
  void onIntervalChange();
  void onMaxVisitDurationChange();
  void defer(ResolvedWrites&& resolved);

  const std::string name;
  config::Configuration& config;
  vbucket::VBucketMap& map;
  executor::ExecutorPool& pool;
  const clock::ClockRef clock;
  const clock::ClockRef visitor_clock;

  DurabilitySettings settings;
  TimeoutTaskCounters task_counters;
  // Timeout tasks are unregistered at shutdown; completion tasks only at
  // destruction, so a write racing with shutdown() still gets its deferred
  // completion from a pool thread.
  executor::Taskable timeout_owner;
  executor::Taskable completion_owner;
  std::vector<Slot> slots;
  std::vector<config::Configuration::ListenerId> config_listeners;

  mutable std::mutex tasks_mutex;
  std::atomic<TimeoutMode> mode;
  std::shared_ptr<PollingTimeoutTask> polling;  // tasks_mutex
  uint64_t polling_passes_before = 0;           // of polling tasks stopped; tasks_mutex
  uint64_t mode_switches = 0;                   // tasks_mutex
  bool shut_down = false;                       // tasks_mutex
};

BucketDurability::Impl::Impl(std::string name_in, config::Configuration& config_in,
                             vbucket::VBucketMap& map_in, executor::ExecutorPool& pool_in,
                             ReplicationTopology topology_in, clock::ClockRef clock_in)
    : name(std::move(name_in)),
      config(config_in),
      map(map_in),
      pool(pool_in),
      clock(clock_in),
      visitor_clock(visitorClockOf(config.get(keys::kDurabilityVisitorClock))),
      timeout_owner(name + ": durability timeouts"),
      completion_owner(name + ": durability completions"),
      mode(modeOf(config)) {
  settings.min_level.store(minLevelOf(config.get(keys::kDurabilityMinLevel)));
  settings.default_timeout_ms.store(config.get(keys::kDurabilityDefaultTimeout).count());
  slots.resize(map.size());
  for (size_t i = 0; i < map.size(); ++i) {
    slots[i].monitor = std::make_unique<ActiveDurabilityMonitor>(map.at(static_cast<Vbid>(i)),
                                                                 settings, topology_in);
  }
}

void BucketDurability::Impl::startTimerLocked(Slot& slot) {
  if (slot.timer || shut_down) return;
  if (slot.monitor->vbucket().state() != vbucket::VBucketState::kActive) return;
  auto timer = std::make_shared<VBucketTimeoutTask>(timeout_owner, pool, *slot.monitor, clock,
                                                    task_counters);
  if (pool.schedule(timer) == executor::kNoTask) return;
  slot.timer = std::move(timer);
  slot.monitor->setHeadDeadlineListener(slot.timer.get());  // arms it
}

void BucketDurability::Impl::stopTimerLocked(Slot& slot) {
  if (!slot.timer) return;
  // Detached first, under the monitor's lock: no one re-arms it afterwards.
  slot.monitor->setHeadDeadlineListener(nullptr);
  pool.cancel(slot.timer->id());
  task_counters.rearms.fetch_add(slot.timer->rearms(), std::memory_order_relaxed);
  slot.timer.reset();
}

void BucketDurability::Impl::startPollingLocked() {
  if (polling || shut_down) return;
  auto task = std::make_shared<PollingTimeoutTask>(
      timeout_owner, pool, map,
      [this](Vbid vb) -> ActiveDurabilityMonitor& { return *slots[vb].monitor; }, clock,
      visitor_clock, config.get(keys::kMaxVbucketVisitDuration),
      config.get(keys::kDurabilityTimeoutTaskInterval), task_counters);
  if (pool.schedule(task) == executor::kNoTask) return;  // the first pass starts at once
  polling = std::move(task);
}

void BucketDurability::Impl::stopPollingLocked() {
  if (!polling) return;
  pool.cancel(polling->id());
  polling_passes_before += polling->passesCompleted();
  polling.reset();
}

// The new mechanism starts before the old one stops: between the two, both
// look for expired writes, which is harmless (a write is aborted once, under
// its monitor's lock); a gap would not be.
void BucketDurability::Impl::applyModeLocked(TimeoutMode new_mode) {
  if (shut_down) return;
  if (new_mode == TimeoutMode::kPolling) {
    startPollingLocked();
    for (Slot& slot : slots) stopTimerLocked(slot);
  } else {
    for (Slot& slot : slots) startTimerLocked(slot);
    stopPollingLocked();
  }
  mode.store(new_mode, std::memory_order_release);
}

void BucketDurability::Impl::onStateChange(vbucket::VBucket& vb, vbucket::VBucketState old_state,
                                           vbucket::VBucketState new_state) {
  Slot& slot = slots[vb.id()];
  ResolvedWrites resolved;
  {
    std::lock_guard lock(tasks_mutex);
    if (old_state == vbucket::VBucketState::kActive) {
      stopTimerLocked(slot);
      slot.monitor->abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
    }
    if (new_state == vbucket::VBucketState::kActive &&
        mode.load(std::memory_order_relaxed) == TimeoutMode::kEventDriven) {
      startTimerLocked(slot);
    }
  }
  resolved.notify();
}

void BucketDurability::Impl::onModeChange() {
  const TimeoutMode new_mode = modeOf(config);
  std::lock_guard lock(tasks_mutex);
  if (shut_down || new_mode == mode.load(std::memory_order_relaxed)) return;
  applyModeLocked(new_mode);
  ++mode_switches;
}

void BucketDurability::Impl::onIntervalChange() {
  std::lock_guard lock(tasks_mutex);
  if (!polling) return;
  polling->setPassInterval(config.get(keys::kDurabilityTimeoutTaskInterval));
  // A pass now, after which the new interval applies — rather than at the
  // end of a sleep of the old interval.
  polling->runAgain();
}

void BucketDurability::Impl::onMaxVisitDurationChange() {
  std::lock_guard lock(tasks_mutex);
  if (polling) polling->setMaxChunkDuration(config.get(keys::kMaxVbucketVisitDuration));
}

void BucketDurability::Impl::defer(ResolvedWrites&& resolved) {
  // If the pool refuses (only while this object is being destroyed), the
  // task's destructor notifies on this thread.
  pool.schedule(std::make_shared<CompletionTask>(completion_owner, std::move(resolved)));
}

BucketDurability::BucketDurability(std::string name, config::Configuration& bucket_config,
                                   vbucket::VBucketMap& vbuckets, executor::ExecutorPool& pool,
                                   ReplicationTopology topology, clock::ClockRef clock)
    : impl_(std::make_unique<Impl>(std::move(name), bucket_config, vbuckets, pool,
                                   std::move(topology), clock)) {
  Impl& d = *impl_;
  for (Impl::Slot& slot : d.slots) {
    slot.state_listener = slot.monitor->vbucket().addStateListener(
        [&d](vbucket::VBucket& vb, vbucket::VBucketState old_state,
             vbucket::VBucketState new_state) { d.onStateChange(vb, old_state, new_state); });
  }
  auto& listeners = d.config_listeners;
  listeners.push_back(d.config.addListener(
      keys::kDurabilityTimeoutMode, [&d](config::DurabilityTimeoutMode) { d.onModeChange(); }));
  listeners.push_back(
      d.config.addListener(keys::kDurabilityTimeoutTaskInterval,
                           [&d](std::chrono::milliseconds) { d.onIntervalChange(); }));
  listeners.push_back(
      d.config.addListener(keys::kMaxVbucketVisitDuration,
                           [&d](std::chrono::milliseconds) { d.onMaxVisitDurationChange(); }));
  listeners.push_back(d.config.addListener(
      keys::kDurabilityDefaultTimeout,
      [&d](std::chrono::milliseconds v) { d.settings.default_timeout_ms.store(v.count()); }));
  listeners.push_back(d.config.addListener(
      keys::kDurabilityMinLevel,
      [&d](config::DurabilityMinLevel v) { d.settings.min_level.store(minLevelOf(v)); }));
  std::lock_guard lock(d.tasks_mutex);
  d.applyModeLocked(modeOf(d.config));
}

BucketDurability::~BucketDurability() {
  Impl& d = *impl_;
  for (config::Configuration::ListenerId id : d.config_listeners) d.config.removeListener(id);
  for (Impl::Slot& slot : d.slots) slot.monitor->vbucket().removeStateListener(slot.state_listener);
  shutdown(AmbiguousReason::kBucketDeleted);
  // Deferred completions not yet run are notified by their tasks' destructors.
  d.pool.unregisterTaskable(d.completion_owner);
}

WriteResult BucketDurability::write(Vbid vbid, WriteRequest request, Completion completion) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) return {WriteStatus::kNotActive, 0};
  ResolvedWrites resolved;
  const WriteResult result = d.slots[vbid].monitor->write(std::move(request), std::move(completion),
                                                          d.clock.now(), resolved);
  if (!resolved.empty()) d.defer(std::move(resolved));
  return result;
}

bool BucketDurability::seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno prepared_seqno) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) return false;
  ResolvedWrites resolved;
  const bool accepted = d.slots[vbid].monitor->seqnoAckReceived(node, prepared_seqno, resolved);
  resolved.notify();
  return accepted;
}

void BucketDurability::notifyLocalPersistence(Vbid vbid, Seqno persisted_seqno) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) return;
  ResolvedWrites resolved;
  d.slots[vbid].monitor->notifyLocalPersistence(persisted_seqno, resolved);
  resolved.notify();
}

void BucketDurability::setTopology(ReplicationTopology topology) {
  Impl& d = *impl_;
  for (Impl::Slot& slot : d.slots) {
    ResolvedWrites resolved;
    slot.monitor->setTopology(topology, resolved);
    resolved.notify();
  }
}

ReplicationTopology BucketDurability::topology() const {
  // Every monitor has the bucket's topology (VBucketMap has >= 1 vbucket).
  return impl_->slots.front().monitor->topology();
}

void BucketDurability::checkTimeoutsNow() {
  Impl& d = *impl_;
  std::lock_guard lock(d.tasks_mutex);
  if (d.polling) {
    d.polling->runAgain();
    return;
  }
  for (Impl::Slot& slot : d.slots) {
    if (slot.timer && slot.monitor->hasSyncWrites()) d.pool.wake(slot.timer->id());
  }
}

void BucketDurability::shutdown(AmbiguousReason reason) {
  Impl& d = *impl_;
  ResolvedWrites resolved;
  {
    std::lock_guard lock(d.tasks_mutex);
    if (d.shut_down) return;
    for (Impl::Slot& slot : d.slots) d.stopTimerLocked(slot);
    d.stopPollingLocked();
    d.shut_down = true;
    for (Impl::Slot& slot : d.slots) slot.monitor->abortAll(reason, /*close=*/true, resolved);
  }
  // Waits for a timeout task still running (it finds nothing left to abort).
  d.pool.unregisterTaskable(d.timeout_owner);
  resolved.notify();
}

TimeoutMode BucketDurability::mode() const noexcept {
  return impl_->mode.load(std::memory_order_acquire);
}

DurabilityStats BucketDurability::stats() const {
  const Impl& d = *impl_;
  DurabilityStats s;
  for (const Impl::Slot& slot : d.slots) {
    const MonitorCounters c = slot.monitor->counters();
    s.in_flight += c.in_flight;
    s.committed += c.committed;
    s.aborted_timeout += c.aborted_timeout;
    s.ambiguous_other += c.ambiguous_other;
    s.plain_writes += c.plain_writes;
    s.refused += c.refused;
  }
  s.timeout_task_runs = d.task_counters.runs.load(std::memory_order_relaxed);
  std::lock_guard lock(d.tasks_mutex);
  s.mode = d.mode.load(std::memory_order_relaxed);
  s.mode_switches = d.mode_switches;
  // Retired and live timers' re-arms, read under the lock that retires them.
  s.timeout_rearms = d.task_counters.rearms.load(std::memory_order_relaxed);
  for (const Impl::Slot& slot : d.slots) {
    if (!slot.timer) continue;
    ++s.timeout_tasks;
    s.timeout_rearms += slot.timer->rearms();
  }
  if (d.polling) ++s.timeout_tasks;
  s.polling_passes = d.polling_passes_before + (d.polling ? d.polling->passesCompleted() : 0);
  return s;
}

clock::TimePoint BucketDurability::armedDeadline(Vbid vbid) const {
  const Impl& d = *impl_;
  if (vbid >= d.slots.size()) return clock::kNever;
  std::lock_guard lock(d.tasks_mutex);
  const auto& timer = d.slots[vbid].timer;
  return timer ? timer->armedDeadline() : clock::kNever;
}

clock::TimePoint BucketDurability::headDeadline(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() ? d.slots[vbid].monitor->headDeadline() : clock::kNever;
}

size_t BucketDurability::inFlight(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() ? d.slots[vbid].monitor->numTracked() : 0;
}

clock::Duration BucketDurability::pollingInterval() const {
  const Impl& d = *impl_;
  std::lock_guard lock(d.tasks_mutex);
  return d.polling ? d.polling->passInterval() : clock::Duration::max();
}

clock::Duration BucketDurability::pollingMaxChunkDuration() const {
  const Impl& d = *impl_;
  std::lock_guard lock(d.tasks_mutex);
  return d.polling ? d.polling->maxChunkDuration() : clock::Duration::max();
}

}  // namespace syncwrite::durability
