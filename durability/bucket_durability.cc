// BucketDurability: monitors per vbucket, the timeout mechanism of the
// configured mode, and the listeners that keep both current.
//
// Locks, in the order they may be taken:
//   tasks_mutex (which timeout tasks exist, the mode)  →  a monitor's lock;
//   a vbucket's transition_mutex_ (vbucket.h: held while its state listeners
//     run, so onStateChange()'s abortAll() takes the monitor's lock under it)
//     →  that vbucket's monitor's lock;
//   a monitor's lock  →  the executor's locks (the timer's snooze, through
//     the DeadlineListener) and the vbucket's internal locks.
// tasks_mutex also comes before the executor's locks (cancel, wake). No code
// below takes tasks_mutex with a monitor's lock or a transition_mutex_ held,
// nor a transition_mutex_ with tasks_mutex held (the destructor's
// removeStateListener() waits on it with no lock held). The members each one
// guards are annotated, and the clang preset checks them; the order crosses
// classes, which an ABSL_ACQUIRED_BEFORE cannot name, so it stays in prose.
// Completions are notified after tasks_mutex and every monitor's lock are
// released; onStateChange()'s still under the vbucket's transition_mutex_.
#include "durability/bucket_durability.h"

#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "durability/bucket_durability_impl.h"
#include "durability/config_values.h"

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

BucketDurability::Impl::Impl(std::string name_in, config::Configuration& config_in,
                             vbucket::VBucketMap& map_in, executor::ExecutorPool& pool_in,
                             const ReplicationTopology& topology_in, TimeoutClocks clocks_in)
    : name(std::move(name_in)),
      config(config_in),
      map(map_in),
      pool(pool_in),
      clocks(clocks_in),
      visitor_clock(visitorClockOf(config.get(keys::kDurabilityVisitorClock))),
      in_flight(map.size()),
      timeout_owner(name + ": durability timeouts"),
      completion_owner(name + ": durability completions"),
      mode(modeOf(config)) {
  settings.persistent = config.get(keys::kBucketType) == config::BucketType::kCouchbase;
  settings.min_level.store(minLevelOf(config.get(keys::kDurabilityMinLevel)));
  settings.default_timeout_ms.store(config.get(keys::kDurabilityDefaultTimeout).count());
  slots.resize(map.size());
  // Each monitor keeps its own topology: copies, and this one for the last.
  const size_t last = map.size() - 1;  // a VBucketMap has at least one vbucket
  for (size_t i = 0; i < last; ++i) {
    slots[i].monitor = std::make_unique<ActiveDurabilityMonitor>(map.at(static_cast<Vbid>(i)),
                                                                 settings, topology_in, &in_flight);
  }
  slots[last].monitor = std::make_unique<ActiveDurabilityMonitor>(
      map.at(static_cast<Vbid>(last)), settings, topology_in, &in_flight);
}

void BucketDurability::Impl::startTimerLocked() {
  if (timer || shut_down) return;
  auto task = std::make_shared<BucketTimeoutTask>(
      timeout_owner, pool, in_flight,
      [this](Vbid vb) -> ActiveDurabilityMonitor& { return *slots[vb].monitor; }, clocks.deadline,
      clocks.timer_slack, config.get(keys::kDurabilityTimeoutSlice),
      countersOf(TimeoutMode::kEventDriven));
  if (pool.schedule(task) == executor::kNoTask) return;
  timer = std::move(task);
  // Each monitor with writes arms it for its next deadline.
  for (Slot& slot : slots) slot.monitor->setDeadlineListener(timer.get());
}

void BucketDurability::Impl::stopTimerLocked() {
  if (!timer) return;
  // Detached first, each under its monitor's lock: no one re-arms it afterwards.
  for (Slot& slot : slots) slot.monitor->setDeadlineListener(nullptr);
  pool.cancel(timer->id());
  countersOf(TimeoutMode::kEventDriven)
      .rearms.fetch_add(timer->rearms(), std::memory_order_relaxed);
  timer.reset();
}

void BucketDurability::Impl::startPollingLocked() {
  if (polling || shut_down) return;
  auto task = std::make_shared<PollingTimeoutTask>(
      timeout_owner, pool, map, in_flight,
      [this](Vbid vb) -> ActiveDurabilityMonitor& { return *slots[vb].monitor; }, clocks.polling,
      visitor_clock, config.get(keys::kMaxVbucketVisitDuration),
      config.get(keys::kDurabilityTimeoutTaskInterval), countersOf(TimeoutMode::kPolling));
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
    stopTimerLocked();
  } else {
    startTimerLocked();
    stopPollingLocked();
  }
  mode.store(new_mode, std::memory_order_release);
}

void BucketDurability::Impl::onStateChange(vbucket::VBucket& vb, vbucket::VBucketState old_state,
                                           vbucket::VBucketState new_state) {
  // The bucket's timer serves whichever vbuckets are active; a vbucket that
  // is not tracks no write, so it is not in the in-flight set either.
  if (old_state != vbucket::VBucketState::kActive || new_state == old_state) return;
  ResolvedWrites resolved;
  slots[vb.id()].monitor->abortAll(AmbiguousReason::kLeftActive, /*close=*/false, resolved);
  resolved.notify();
}

void BucketDurability::Impl::onModeChange() {
  const TimeoutMode new_mode = modeOf(config);
  base::MutexLock lock(tasks_mutex);
  if (shut_down || new_mode == mode.load(std::memory_order_relaxed)) return;
  applyModeLocked(new_mode);
  ++mode_switches;
}

void BucketDurability::Impl::onIntervalChange() {
  base::MutexLock lock(tasks_mutex);
  if (!polling) return;
  polling->setPassInterval(config.get(keys::kDurabilityTimeoutTaskInterval));
  // A pass now, after which the new interval applies — rather than at the
  // end of a sleep of the old interval.
  polling->runAgain();
}

void BucketDurability::Impl::onTimeoutSliceChange() {
  base::MutexLock lock(tasks_mutex);
  if (timer) timer->setMaxSlice(config.get(keys::kDurabilityTimeoutSlice));
}

void BucketDurability::Impl::onMaxVisitDurationChange() {
  base::MutexLock lock(tasks_mutex);
  if (polling) polling->setMaxChunkDuration(config.get(keys::kMaxVbucketVisitDuration));
}

void BucketDurability::Impl::defer(ResolvedWrites&& resolved) {
  // If the pool refuses (only while this object is being destroyed), the
  // task's destructor notifies on this thread.
  pool.schedule(std::make_shared<CompletionTask>(completion_owner, std::move(resolved)));
}

BucketDurability::BucketDurability(std::string name, config::Configuration& bucket_config,
                                   vbucket::VBucketMap& vbuckets, executor::ExecutorPool& pool,
                                   const ReplicationTopology& topology, TimeoutClocks clocks)
    : impl_(std::make_unique<Impl>(std::move(name), bucket_config, vbuckets, pool, topology,
                                   clocks)) {
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
  listeners.push_back(
      d.config.addListener(keys::kDurabilityTimeoutSlice,
                           [&d](std::chrono::milliseconds) { d.onTimeoutSliceChange(); }));
  listeners.push_back(d.config.addListener(
      keys::kDurabilityDefaultTimeout,
      [&d](std::chrono::milliseconds v) { d.settings.default_timeout_ms.store(v.count()); }));
  listeners.push_back(
      d.config.addValidator(keys::kDurabilityMinLevel, [&d](config::DurabilityMinLevel v) {
        return checkMinLevel(minLevelOf(v), d.settings.persistent);
      }));
  listeners.push_back(d.config.addListener(
      keys::kDurabilityMinLevel,
      [&d](config::DurabilityMinLevel v) { d.settings.min_level.store(minLevelOf(v)); }));
  base::MutexLock lock(d.tasks_mutex);
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
  const WriteResult result = d.slots[vbid].monitor->write(request, std::move(completion),
                                                          d.clocks.deadline.now(), resolved);
  if (!resolved.empty()) d.defer(std::move(resolved));
  return result;
}

bool BucketDurability::mayPend(const WriteRequest& request) const noexcept {
  return request.durability.has_value() ||
         impl_->settings.min_level.load(std::memory_order_relaxed) != Level::kNone;
}

size_t BucketDurability::flush() {
  Impl& d = *impl_;
  size_t deleted = 0;
  for (size_t vb = 0; vb < d.slots.size(); ++vb) {
    ResolvedWrites resolved;
    d.slots[vb].monitor->abortAll(AmbiguousReason::kFlushed, /*close=*/false, resolved);
    resolved.notify();
    vbucket::VBucket* v = d.map.get(static_cast<Vbid>(vb));
    if (v == nullptr || v->state() != vbucket::VBucketState::kActive) continue;
    for (std::string& key : v->hashTable().keys()) {
      WriteRequest request;
      request.op = WriteOp::kDelete;
      request.key = key;  // `key` outlives the write() call
      // No completion: a plain delete whatever durability_min_level says.
      if (write(static_cast<Vbid>(vb), request, {}).status == WriteStatus::kCommitted) {
        ++deleted;
      }
    }
  }
  return deleted;
}

bool BucketDurability::seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno prepared_seqno) {
  ResolvedWrites resolved;
  const bool accepted = seqnoAcknowledged(vbid, node, prepared_seqno, resolved);
  resolved.notify();
  return accepted;
}

bool BucketDurability::seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno prepared_seqno,
                                         ResolvedWrites& resolved) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) return false;
  return d.slots[vbid].monitor->seqnoAckReceived(node, prepared_seqno, resolved);
}

void BucketDurability::notifyLocalPersistence(Vbid vbid, Seqno persisted_seqno) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) return;
  ResolvedWrites resolved;
  d.slots[vbid].monitor->notifyLocalPersistence(persisted_seqno, resolved);
  resolved.notify();
  if (d.map.at(vbid).state() != vbucket::VBucketState::kReplica) return;
  PassiveDurabilityMonitor* passive = nullptr;
  {
    base::MutexLock lock(d.passive_mutex);
    auto it = d.passive.find(vbid);
    if (it != d.passive.end()) passive = it->second.get();
  }
  if (passive == nullptr) return;
  if (const std::optional<Seqno> hps = passive->notifyLocalPersistence(persisted_seqno);
      hps && d.passive_ack_listener) {
    d.passive_ack_listener(vbid, *hps);
  }
}

void BucketDurability::forgetQueuedAcks(const std::string& node) {
  for (auto& slot : impl_->slots) slot.monitor->forgetQueuedAck(node);
}

void BucketDurability::setTopology(const ReplicationTopology& topology) {
  Impl& d = *impl_;
  auto apply = [](Impl::Slot& slot, ReplicationTopology t) {
    ResolvedWrites resolved;
    slot.monitor->setTopology(std::move(t), resolved);
    resolved.notify();
  };
  // Each monitor keeps its own copy.
  for (Impl::Slot& slot : d.slots) apply(slot, topology);
}

ReplicationTopology BucketDurability::topology() const {
  // vbucket 0's: every monitor has the bucket's topology unless one was set
  // per vbucket (VBucketMap has >= 1 vbucket).
  return impl_->slots.front().monitor->topology();
}

void BucketDurability::setTopology(Vbid vbid, ReplicationTopology topology) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) {
    throw std::out_of_range("setTopology: vbucket " + std::to_string(vbid) + " of " +
                            std::to_string(d.slots.size()));
  }
  ResolvedWrites resolved;
  d.slots[vbid].monitor->setTopology(std::move(topology), resolved);
  resolved.notify();
}

void BucketDurability::awaitTopology(Vbid vbid) {
  Impl& d = *impl_;
  if (vbid >= d.slots.size()) {
    throw std::out_of_range("awaitTopology: vbucket " + std::to_string(vbid) + " of " +
                            std::to_string(d.slots.size()));
  }
  d.slots[vbid].monitor->awaitTopology();
}

bool BucketDurability::awaitingTopology(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() && d.slots[vbid].monitor->awaitingTopology();
}

ReplicationTopology BucketDurability::topology(Vbid vbid) const {
  const Impl& d = *impl_;
  if (vbid >= d.slots.size()) {
    throw std::out_of_range("topology: vbucket " + std::to_string(vbid) + " of " +
                            std::to_string(d.slots.size()));
  }
  return d.slots[vbid].monitor->topology();
}

std::vector<std::pair<vbucket::QueuedItem, Level>> BucketDurability::trackedPrepares(
    Vbid vbid) const {
  const Impl& d = *impl_;
  if (vbid >= d.slots.size()) return {};
  return d.slots[vbid].monitor->trackedPrepares();
}

void BucketDurability::checkTimeoutsNow() {
  Impl& d = *impl_;
  base::MutexLock lock(d.tasks_mutex);
  if (d.polling) {
    d.polling->runAgain();
    return;
  }
  if (d.timer && !d.in_flight.empty()) d.pool.wake(d.timer->id());
}

void BucketDurability::shutdown(AmbiguousReason reason) {
  // A second caller waits here until the first has answered every write.
  std::call_once(impl_->shutdown_once, [this, reason] { shutdownOnce(reason); });
}

void BucketDurability::shutdownOnce(AmbiguousReason reason) {
  Impl& d = *impl_;
  ResolvedWrites resolved;
  {
    base::MutexLock lock(d.tasks_mutex);
    d.stopTimerLocked();
    d.stopPollingLocked();
    d.shut_down = true;
    // One reservation for every write in flight (a hint: a write may still
    // be added between a monitor's count and its abortAll), rather than
    // growth by doubling, whose copies and page faults showed in the perf
    // profile of a SIGTERM with 300k writes pending.
    size_t in_flight = 0;
    for (const Impl::Slot& slot : d.slots) in_flight += slot.monitor->counters().in_flight;
    resolved.reserve(in_flight);
    for (Impl::Slot& slot : d.slots) slot.monitor->abortAll(reason, /*close=*/true, resolved);
  }
  // Waits for a timeout task still running (it finds nothing left to abort).
  d.pool.unregisterTaskable(d.timeout_owner);
  resolved.notify();
}

TimeoutMode BucketDurability::mode() const noexcept {
  return impl_->mode.load(std::memory_order_acquire);
}

std::vector<std::pair<std::string, uint64_t>> BucketDurability::unackedByReplica() const {
  std::map<std::string, uint64_t> sums;
  for (const Impl::Slot& slot : impl_->slots) {
    if (slot.monitor->vbucket().state() != vbucket::VBucketState::kActive) continue;
    for (auto& [replica, unacked] : slot.monitor->unackedByReplica()) sums[replica] += unacked;
  }
  return {sums.begin(), sums.end()};
}

std::vector<std::pair<std::string, uint64_t>> BucketDurability::ackLagByReplica() const {
  std::map<std::string, uint64_t> sums;
  for (const Impl::Slot& slot : impl_->slots) {
    if (slot.monitor->vbucket().state() != vbucket::VBucketState::kActive) continue;
    for (auto& [replica, lag] : slot.monitor->ackLagByReplica()) sums[replica] += lag;
  }
  return {sums.begin(), sums.end()};
}

CommitLatency::Snapshot BucketDurability::commitLatency(Level level) const noexcept {
  return impl_->settings.commit_latency.snapshot(level);
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
    s.aborted_other += c.aborted_other;
    s.plain_writes += c.plain_writes;
    s.refused += c.refused;
    s.answered_behind_head += c.answered_behind_head;
    s.committed_after_answer += c.committed_after_answer;
    s.recommitted += c.recommitted;
    for (size_t l = 0; l < kLevelCount; ++l) {
      s.accepted_by_level[l] += c.accepted_by_level[l];
      s.committed_by_level[l] += c.committed_by_level[l];
      s.aborted_by_level[l] += c.aborted_by_level[l];
    }
    for (size_t r = 0; r < kAmbiguousReasonCount; ++r) {
      s.ambiguous_by_reason[r] += c.ambiguous_by_reason[r];
    }
  }
  TimeoutLateness::Snapshot lateness;
  for (size_t m = 0; m < d.task_counters.size(); ++m) {
    const TimeoutTaskCounters& c = d.task_counters[m];
    s.timeout_task_runs_by_mode[m] = c.runs.load(std::memory_order_relaxed);
    s.timeout_task_runs += s.timeout_task_runs_by_mode[m];
    s.timeout_slices_yielded += c.slices_yielded.load(std::memory_order_relaxed);
    s.timeout_lateness_by_mode[m] = c.lateness.snapshot();
    lateness += s.timeout_lateness_by_mode[m];
  }
  s.timeout_late_p50_us = lateness.percentileMicros(0.5);
  s.timeout_late_p99_us = lateness.percentileMicros(0.99);
  s.timeout_late_max_us = lateness.maxMicros();
  base::MutexLock lock(d.tasks_mutex);
  s.mode = d.mode.load(std::memory_order_relaxed);
  s.mode_switches = d.mode_switches;
  // Retired and live timers' re-arms, read under the lock that retires them.
  s.timeout_rearms = d.task_counters[static_cast<size_t>(TimeoutMode::kEventDriven)].rearms.load(
      std::memory_order_relaxed);
  if (d.timer) {
    ++s.timeout_tasks;
    s.timeout_rearms += d.timer->rearms();
  }
  if (d.polling) ++s.timeout_tasks;
  s.polling_passes = d.polling_passes_before + (d.polling ? d.polling->passesCompleted() : 0);
  return s;
}

clock::TimePoint BucketDurability::armedDeadline() const {
  const Impl& d = *impl_;
  base::MutexLock lock(d.tasks_mutex);
  return d.timer ? d.timer->armedDeadline() : clock::kNever;
}

clock::Duration BucketDurability::timerSlack() const {
  const Impl& d = *impl_;
  base::MutexLock lock(d.tasks_mutex);
  return d.timer ? d.timer->slack() : clock::Duration::max();
}

bool BucketDurability::inFlightSetHas(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() && d.in_flight.contains(vbid);
}

clock::TimePoint BucketDurability::headDeadline(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() ? d.slots[vbid].monitor->headDeadline() : clock::kNever;
}

clock::TimePoint BucketDurability::nextDeadline(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() ? d.slots[vbid].monitor->nextDeadline() : clock::kNever;
}

size_t BucketDurability::inFlight(Vbid vbid) const {
  const Impl& d = *impl_;
  return vbid < d.slots.size() ? d.slots[vbid].monitor->numTracked() : 0;
}

clock::Duration BucketDurability::pollingInterval() const {
  const Impl& d = *impl_;
  base::MutexLock lock(d.tasks_mutex);
  return d.polling ? d.polling->passInterval() : clock::Duration::max();
}

clock::Duration BucketDurability::pollingMaxChunkDuration() const {
  const Impl& d = *impl_;
  base::MutexLock lock(d.tasks_mutex);
  return d.polling ? d.polling->maxChunkDuration() : clock::Duration::max();
}

}  // namespace syncwrite::durability
