#include "server/bucket.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "clock/clock_ref.h"
#include "clock/precise_clock.h"
#include "kvstore/disk_flusher.h"
#include "server/dispatcher.h"
#include "server/log.h"
#include "server/replica_faults.h"
#include "server/sasl/crypto.h"
#include "server/stored_vbucket_state.h"

namespace syncwrite::server {

namespace {
// OK unless the recovery's lower mark is above its upper mark.
absl::Status checkRecoveryMarks(uint64_t lower, uint64_t upper) {
  if (lower <= upper) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("checkpoint_memory_recovery_lower_mark_percent ", lower,
                   " is above checkpoint_memory_recovery_upper_mark_percent ", upper));
}
}  // namespace

absl::StatusOr<std::unique_ptr<Bucket>> Bucket::create(BucketSpec spec,
                                                       const std::string& node_name,
                                                       executor::ExecutorPool& pool,
                                                       const ReplicaIo& replica_io,
                                                       const ClusterSpec* cluster) {
  // In a cluster, vbucket 0's chain until each vbucket gets its own below.
  durability::ReplicationChain first{node_name, spec.replicas};
  if (cluster != nullptr) {
    std::vector<std::string> chain = cluster->chain(0, spec.num_replicas);
    first.active = chain.front();
    first.replicas.assign(chain.begin() + 1, chain.end());
  }
  auto topology = durability::ReplicationTopology::create({std::move(first)});
  if (!topology.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buckets.", spec.name, ": ", topology.status().message()));
  }
  if (absl::Status marks = checkRecoveryMarks(
          spec.config->get(config::keys::kCheckpointMemoryRecoveryLowerMarkPercent),
          spec.config->get(config::keys::kCheckpointMemoryRecoveryUpperMarkPercent));
      !marks.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("buckets.", spec.name, ": ", marks.message()));
  }
  std::vector<SimulatedReplicaSpec> simulated = std::move(spec.simulated);
  const size_t num_replicas = spec.num_replicas;
  const std::filesystem::path data_dir = spec.data_dir;
  std::unique_ptr<Bucket> bucket(new Bucket(std::move(spec), pool, *topology));
  if (cluster != nullptr) {
    bucket->num_replicas_ = num_replicas;
    if (absl::Status placed = bucket->placeVbuckets(*cluster, node_name); !placed.ok()) {
      return placed;
    }
  }
  if (!data_dir.empty()) {
    if (absl::Status warm = bucket->openAndWarmUp(data_dir, node_name); !warm.ok()) {
      return absl::Status(warm.code(),
                          absl::StrCat("bucket \"", bucket->name_, "\": ", warm.message()));
    }
  }
  bucket->startFlusher();

  Bucket* self = bucket.get();
  std::vector<std::string> simulated_names;
  for (const SimulatedReplicaSpec& replica : simulated) {
    bucket->replicas_.push_back(std::make_unique<SimulatedReplica>(
        replica.name, replica.ack_delay, replica.ack_jitter, replica_io(),
        [self](vbucket::Vbid vbid, const std::string& node, vbucket::Seqno seqno,
               durability::ResolvedWrites& resolved) {
          self->durability_->seqnoAcknowledged(vbid, node, seqno, resolved);
        },
        &bucket->vbuckets_));
    simulated_names.push_back(
        absl::StrCat(replica.name, " (", replica.ack_delay.count(), " ms",
                     replica.ack_jitter.count() > 0
                         ? absl::StrCat(" + 0..", replica.ack_jitter.count(), " ms jitter")
                         : "",
                     ")"));
  }
  bucket->watchFaultKeys();
  // The prepares warmup put back are in no log a simulated replica reads:
  // each is told it received them, and acknowledges them as it would — after
  // the fault keys, so that a replica paused by the configuration holds them
  // (both calls post to the replica's strand, in this order).
  for (const auto& [vbid, seqno] : bucket->warmup_.promoted) {
    for (const auto& replica : bucket->replicas_) replica->onPrepare(vbid, seqno);
  }

  const std::string& name = bucket->name_;
  bucket->mode_listener_ = bucket->config_->addListener(
      config::keys::kDurabilityTimeoutMode, [name](config::DurabilityTimeoutMode mode) {
        logLine(absl::StrCat("bucket \"", name, "\": durability_timeout_mode switched to ",
                             std::string(config::spellingOf(mode))));
      });

  std::vector<std::string> chain{node_name};
  const durability::ReplicationTopology topology_now = bucket->durability_->topology();
  for (const std::string& node : topology_now.chains().front().replicas) chain.push_back(node);
  size_t active = 0;
  size_t replica = 0;
  for (size_t vb = 0; vb < bucket->vbuckets_.size(); ++vb) {
    const vbucket::VBucketState state =
        bucket->vbuckets_.at(static_cast<vbucket::Vbid>(vb)).state();
    active += state == vbucket::VBucketState::kActive ? 1 : 0;
    replica += state == vbucket::VBucketState::kReplica ? 1 : 0;
  }
  const std::string placement =
      cluster ? absl::StrCat(active, " active and ", replica, " replica vbuckets of ",
                             bucket->vbuckets_.size(), " (", num_replicas,
                             " replicas each, on the cluster's ", cluster->nodes.size(), " nodes)")
              : absl::StrCat(bucket->vbuckets_.size(), " active vbuckets");
  logLine(absl::StrCat(
      "bucket \"", name, "\" created: ", placement, ", durability_timeout_mode ",
      std::string(config::spellingOf(bucket->config_->get(config::keys::kDurabilityTimeoutMode))),
      cluster ? "" : absl::StrCat(", chain [", absl::StrJoin(chain, ", "), "]"),
      ", simulated replicas: ",
      simulated_names.empty() ? "none" : absl::StrJoin(simulated_names, ", ")));
  return bucket;
}

absl::Status Bucket::placeVbuckets(const ClusterSpec& cluster, const std::string& node_name) {
  for (size_t id = 0; id < vbuckets_.size(); ++id) {
    const auto vbid = static_cast<vbucket::Vbid>(id);
    const std::vector<std::string> chain = cluster.chain(vbid, num_replicas_);
    const bool here = std::find(chain.begin(), chain.end(), node_name) != chain.end();
    durability::ReplicationChain links;
    links.active = chain.front();
    links.replicas.assign(chain.begin() + 1, chain.end());
    auto topology = durability::ReplicationTopology::create({std::move(links)});
    if (!topology.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("buckets.", name_, ": vbucket ", id, ": ", topology.status().message()));
    }
    durability_->setTopology(vbid, std::move(*topology));
    vbucket::VBucket& vb = vbuckets_.at(vbid);
    if (chain.front() == node_name) continue;  // active, as created
    vb.setState(here ? vbucket::VBucketState::kReplica : vbucket::VBucketState::kDead);
  }
  return absl::OkStatus();
}

namespace {
// `bytes` random bytes as lower-case hex.
std::string randomHex(size_t bytes) { return absl::BytesToHexString(sasl::randomBytes(bytes)); }

// A failover entry's uuid: random, never 0 (kv_engine keeps 0 for "none").
uint64_t randomUuid() {
  uint64_t uuid = 0;
  while (uuid == 0) {
    const std::string bytes = sasl::randomBytes(sizeof(uuid));
    std::memcpy(&uuid, bytes.data(), sizeof(uuid));
  }
  return uuid;
}
}  // namespace

void Bucket::startNewHistory(vbucket::Vbid vbid) {
  vbucket::VBucket& vb = vbuckets_.at(vbid);
  vb.failovers().createEntry(randomUuid(), vb.highSeqno());
}

Bucket::Bucket(BucketSpec spec, executor::ExecutorPool& pool,
               const durability::ReplicationTopology& topology)
    : name_(std::move(spec.name)),
      uuid_(randomHex(16)),
      pool_(pool),
      config_(std::move(spec.config)),
      vbuckets_(*config_, vbucket::VBucketState::kActive,
                vbucket::CheckpointOptions{.memory = &memory_, .listener = this}),
      recovery_(std::make_unique<vbucket::CheckpointMemoryRecovery>(
          absl::StrCat("bucket \"", name_, "\" checkpoint memory"), vbuckets_, memory_, pool)),
      durability_(std::make_unique<durability::BucketDurability>(
          name_, *config_, vbuckets_, pool, topology,
          // The precise clock for deadlines and for both modes' checks
          // (bucket_durability.h, "Time"; the polling visitor still paces
          // itself with durability_visitor_clock, coarse by default).
          durability::TimeoutClocks{clock::ClockRef::of<clock::PreciseClock>(),
                                    clock::ClockRef::of<clock::PreciseClock>()})) {
  for (size_t id = 0; id < vbuckets_.size(); ++id) {
    vbuckets_.at(static_cast<vbucket::Vbid>(id)).failovers().createEntry(randomUuid(), 0);
  }
  watchMemoryKeys();
}

absl::Status Bucket::openAndWarmUp(const std::filesystem::path& data_dir,
                                   const std::string& node_name) {
  absl::StatusOr<std::unique_ptr<kvstore::KVStore>> store =
      kvstore::KVStore::open(data_dir, [](std::string_view line) { logLine(line); });
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  absl::StatusOr<WarmupStats> warmed =
      warmup(*store_, vbuckets_, *durability_, node_name,
             [this](vbucket::Vbid vbid) { startNewHistory(vbid); });
  if (!warmed.ok()) return warmed.status();
  warmup_ = std::move(*warmed);
  Dispatcher::casAtLeast(warmup_.max_cas);
  logLine(absl::StrCat("bucket \"", name_, "\": warmup from ", data_dir.string(),
                       " done: ", warmup_.vbuckets, " vbuckets, ", warmup_.documents,
                       " documents, ", warmup_.prepares, " outstanding prepares, in ",
                       warmup_.took.count() / 1000, " ms"));
  return absl::OkStatus();
}

void Bucket::startFlusher() {
  if (store_) {
    flusher_ = std::make_unique<kvstore::DiskFlusher>(
        absl::StrCat("bucket \"", name_, "\" flusher"), vbuckets_, pool_, *store_,
        [this](vbucket::Vbid vbid, vbucket::Seqno seqno) {
          durability_->notifyLocalPersistence(vbid, seqno);
        },
        [this](vbucket::Vbid vbid, vbucket::Seqno high) { return storedState(vbid, high); },
        [](std::string_view line) { logLine(line); });
    // What warmup's promotions queued (commits a chain of one satisfied at
    // once) went into the logs before there was a flusher to mark.
    for (size_t id = 0; id < vbuckets_.size(); ++id) {
      flusher_->markDirty(static_cast<vbucket::Vbid>(id), false);
    }
  }
  watchFlusherKeys();
}

std::string Bucket::storedState(vbucket::Vbid vbid, vbucket::Seqno high_seqno) const {
  const vbucket::VBucket& vb = vbuckets_.at(vbid);
  StoredVBucketState state;
  state.state = vb.state();
  state.high_seqno = high_seqno;
  state.failovers = vb.failovers().entries();
  state.topology = durability_->topology(vbid).toJson().dump();
  state.max_cas = Dispatcher::lastCas();
  return state.toJson();
}

Bucket::~Bucket() {
  listening_.store(false, std::memory_order_release);
  if (mode_listener_ != 0) config_->removeListener(mode_listener_);
  for (config::Configuration::ListenerId id : fault_listeners_) config_->removeListener(id);
  for (config::Configuration::ListenerId id : memory_listeners_) config_->removeListener(id);
  // Members go in reverse order: the replicas (stopped by shutdown()), the
  // flusher (its task unregistered; a disk flusher writes what is queued),
  // the store (closed), the durability layer (which stops its tasks), the
  // recovery task, then the vbuckets, the memory counts and config.
}

durability::WriteResult Bucket::write(vbucket::Vbid vbid, durability::WriteRequest request,
                                      durability::Completion completion) {
  if (request.op != durability::WriteOp::kDelete && memory_.shouldRefuseWrites()) {
    memory_.countRefusedWrite();
    // Recovery may be asleep after a run that left the request clear (the
    // limits were lowered, a reader moved): ask again if the log holds
    // something to recover — at most one wake, none when live data is what
    // fills the quota.
    if (memory_.aboveLowerMark()) memory_.requestRecovery();
    return {durability::WriteStatus::kTemporaryFailure, 0};
  }
  durability::WriteResult result = durability_->write(vbid, request, std::move(completion));
  return result;
}

void Bucket::queued(vbucket::Vbid vbid, vbucket::QueueOp op) noexcept {
  if (!listening_.load(std::memory_order_acquire)) return;
  // No flusher in an ephemeral bucket (and none yet while a couchbase one is
  // built, before anything can be written). A replica waits only for the
  // prepares (simulated_replica.h).
  const bool prepare = op == vbucket::QueueOp::kPrepare;
  if (flusher_) flusher_->markDirty(vbid, prepare);
  for (const auto& replica : replicas_) replica->markDirty(vbid, prepare);
  wakeLogReaders(vbid);
}

void Bucket::wakeLogReaders(vbucket::Vbid vbid) noexcept {
  if (log_readers_count_.load(std::memory_order_acquire) == 0) return;
  base::MutexLock lock(log_readers_mutex_);
  for (LogReader* reader : log_readers_) reader->logQueued(vbid);
}

void Bucket::addLogReader(LogReader* reader) {
  base::MutexLock lock(log_readers_mutex_);
  log_readers_.push_back(reader);
  log_readers_count_.store(log_readers_.size(), std::memory_order_release);
}

void Bucket::removeLogReader(LogReader* reader) {
  base::MutexLock lock(log_readers_mutex_);
  std::erase(log_readers_, reader);
  log_readers_count_.store(log_readers_.size(), std::memory_order_release);
}

std::vector<std::string> Bucket::simulatedNames() const {
  std::vector<std::string> names;
  for (const auto& replica : replicas_) names.push_back(replica->name());
  return names;
}

SimulatedReplica* Bucket::simulatedReplica(std::string_view name) const {
  for (const auto& replica : replicas_) {
    if (replica->name() == name) return replica.get();
  }
  return nullptr;
}

void Bucket::watchFaultKeys() {
  namespace keys = config::keys;
  const std::vector<std::string> names = simulatedNames();
  // A value is checked before it is stored, and applied after; the config
  // file's value (applied below) was checked by nobody yet: an error there
  // is logged and ignored, as the server has started by then.
  auto millis = [this, names](std::string_view key, const std::string& text,
                              void (SimulatedReplica::*set)(std::chrono::milliseconds)) {
    auto parsed = parsePerReplicaMillis(key, text, names);
    if (!parsed.ok())
      return logLine(absl::StrCat("bucket \"", name_, "\": ", parsed.status().message()));
    for (const auto& [replica, ms] : *parsed) (simulatedReplica(replica)->*set)(ms);
    if (!parsed->empty())
      logLine(absl::StrCat("bucket \"", name_, "\": ", std::string(key), " = \"", text, "\""));
  };
  auto paused = [this, names](const std::string& text) {
    auto parsed = parsePausedReplicas(text, names);
    if (!parsed.ok())
      return logLine(absl::StrCat("bucket \"", name_, "\": ", parsed.status().message()));
    for (const auto& replica : replicas_) replica->setPaused(parsed->contains(replica->name()));
    logLine(absl::StrCat("bucket \"", name_, "\": simulated_replicas_paused = \"", text, "\""));
  };
  config::Configuration& c = *config_;
  fault_listeners_.push_back(
      c.addValidator(keys::kSimulatedReplicaAckDelayMs, [names](const std::string& v) {
        return parsePerReplicaMillis("simulated_replica_ack_delay_ms", v, names).status();
      }));
  fault_listeners_.push_back(
      c.addValidator(keys::kSimulatedReplicaAckJitterMs, [names](const std::string& v) {
        return parsePerReplicaMillis("simulated_replica_ack_jitter_ms", v, names).status();
      }));
  fault_listeners_.push_back(c.addValidator(
      keys::kSimulatedReplicasPaused,
      [names](const std::string& v) { return parsePausedReplicas(v, names).status(); }));
  fault_listeners_.push_back(
      c.addListener(keys::kSimulatedReplicaAckDelayMs, [millis](const std::string& v) {
        millis("simulated_replica_ack_delay_ms", v, &SimulatedReplica::setAckDelay);
      }));
  fault_listeners_.push_back(
      c.addListener(keys::kSimulatedReplicaAckJitterMs, [millis](const std::string& v) {
        millis("simulated_replica_ack_jitter_ms", v, &SimulatedReplica::setAckJitter);
      }));
  fault_listeners_.push_back(c.addListener(keys::kSimulatedReplicasPaused, paused));
  millis("simulated_replica_ack_delay_ms", c.get(keys::kSimulatedReplicaAckDelayMs),
         &SimulatedReplica::setAckDelay);
  millis("simulated_replica_ack_jitter_ms", c.get(keys::kSimulatedReplicaAckJitterMs),
         &SimulatedReplica::setAckJitter);
  if (!c.get(keys::kSimulatedReplicasPaused).empty()) paused(c.get(keys::kSimulatedReplicasPaused));
}

void Bucket::watchFlusherKeys() {
  namespace keys = config::keys;
  config::Configuration& c = *config_;
  if (!flusher_) {
    // server_config.cc refuses these at load for an ephemeral bucket.
    auto noFlusher = [this](std::string_view key) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(key), ": bucket \"", name_,
                       "\" is ephemeral and has no flusher (bucket_type)"));
    };
    fault_listeners_.push_back(c.addValidator(
        keys::kFlushDelayMs,
        [noFlusher](std::chrono::milliseconds) { return noFlusher(keys::kFlushDelayMs.name()); }));
    fault_listeners_.push_back(c.addValidator(keys::kFlusherPaused, [noFlusher](bool) {
      return noFlusher(keys::kFlusherPaused.name());
    }));
    return;
  }
  fault_listeners_.push_back(
      c.addListener(keys::kFlushDelayMs, [this](std::chrono::milliseconds d) {
        flusher_->setDelay(d);
        logLine(absl::StrCat("bucket \"", name_, "\": flush_delay_ms = ", d.count()));
      }));
  fault_listeners_.push_back(c.addListener(keys::kFlusherPaused, [this](bool paused) {
    flusher_->setPaused(paused);
    logLine(absl::StrCat("bucket \"", name_, "\": flusher_paused = ", paused));
  }));
  flusher_->setDelay(c.get(keys::kFlushDelayMs));
  flusher_->setPaused(c.get(keys::kFlusherPaused));
}

void Bucket::applyMemoryLimits() {
  namespace keys = config::keys;
  memory_.setLimits(config_->get(keys::kMaxSize), config_->get(keys::kCheckpointMemoryRatioPercent),
                    config_->get(keys::kCheckpointMemoryRecoveryUpperMarkPercent),
                    config_->get(keys::kCheckpointMemoryRecoveryLowerMarkPercent));
}

void Bucket::watchMemoryKeys() {
  namespace keys = config::keys;
  config::Configuration& c = *config_;
  // The lower mark may not pass the upper one, whichever of them changes.
  memory_listeners_.push_back(
      c.addValidator(keys::kCheckpointMemoryRecoveryLowerMarkPercent, [&c](uint64_t lower) {
        return checkRecoveryMarks(lower, c.get(keys::kCheckpointMemoryRecoveryUpperMarkPercent));
      }));
  memory_listeners_.push_back(
      c.addValidator(keys::kCheckpointMemoryRecoveryUpperMarkPercent, [&c](uint64_t upper) {
        return checkRecoveryMarks(c.get(keys::kCheckpointMemoryRecoveryLowerMarkPercent), upper);
      }));
  auto apply = [this](uint64_t) { applyMemoryLimits(); };
  for (const auto& key : {keys::kMaxSize, keys::kCheckpointMemoryRatioPercent,
                          keys::kCheckpointMemoryRecoveryUpperMarkPercent,
                          keys::kCheckpointMemoryRecoveryLowerMarkPercent}) {
    memory_listeners_.push_back(c.addListener(key, apply));
  }
  applyMemoryLimits();
}

void Bucket::shutdown(durability::AmbiguousReason reason) {
  durability_->shutdown(reason);
  for (const auto& replica : replicas_) replica->stop();
}

}  // namespace syncwrite::server
