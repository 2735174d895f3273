// Bucket: one bucket of syncwrite-server — its configuration, its vbuckets,
// its durability layer and its simulated replicas.
//
// Built from a BucketSpec (server_config.h): a VBucketMap of max_vbuckets
// vbuckets, all active; a BucketDurability over them whose topology is one
// chain [node_name, replicas...], stamping and checking deadlines with the
// precise clock; and one SimulatedReplica per simulated replica, reading
// and acknowledging on the io_context create() is given for it. The
// fault-injection keys (replica_faults.h) are checked by validators against
// the simulated replicas' names and applied to them by listeners, at
// creation and at every change.
//
// Local persistence, by bucket_type: a couchbase bucket keeps its data in a
// KVStore under its data directory (locked while it is open) — it warms up
// from there at create() (server/warmup.h) and a kvstore::DiskFlusher
// writes each batch of its logs there, synced, before it reports anything
// persisted (notifyLocalPersistence). An ephemeral bucket keeps nothing on
// disk and has no flusher: it refuses the levels that need persistence
// (DurabilityInvalidLevel, as kv_engine's ephemeral buckets). A paused
// flusher (flusher_paused) holds the persist-level writes of a couchbase
// bucket.
// The replicas' acks say what they say.
//
// Memory: the bucket's items are counted in a BucketMemory
// (vbucket/bucket_memory.h) held to max_size and the checkpoint_memory_*
// keys, which may change at run time; a CheckpointMemoryRecovery task expels
// what every reader has read when checkpoint memory crosses the upper mark.
// While the bucket is at its quota, write() refuses mutations (not deletes,
// which are how a client frees memory) with kTemporaryFailure, 0x86 on the
// wire.
//
// Thread-safety: every member may be called from any thread.
// Lifetime: the pool and the replicas' io_contexts must outlive the bucket;
// shutdown() must have been called and those io_contexts must have stopped
// running before the bucket is destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>
#include <boost/asio/io_context.hpp>

#include "base/mutex.h"
#include "config/configuration.h"
#include "durability/bucket_durability.h"
#include "executor/executor_pool.h"
#include "kvstore/kvstore.h"
#include "server/cluster_config.h"
#include "server/replica_ack_latency.h"
#include "server/server_config.h"
#include "server/simulated_replica.h"
#include "server/warmup.h"
#include "vbucket/bucket_memory.h"
#include "vbucket/checkpoint_memory_recovery.h"
#include "vbucket/flusher.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::server {

class Bucket final : private vbucket::QueueListener {
 public:
  // Asked once per simulated replica, in order: the io_context its stream
  // reads and acks run on.
  using ReplicaIo = std::function<boost::asio::io_context&()>;

  // Builds the bucket described by `spec`, with `node_name` as the active of
  // its chain. InvalidArgument when the chain is not a valid topology. Logs
  // a line naming the bucket, its vbuckets, mode and replicas. With a
  // `cluster` (which must outlive the bucket), each vbucket's chain is
  // ClusterSpec::chain(vbid, spec.num_replicas): active here when this node
  // heads it, replica when it is in it, dead otherwise.
  static absl::StatusOr<std::unique_ptr<Bucket>> create(BucketSpec spec,
                                                        const std::string& node_name,
                                                        executor::ExecutorPool& pool,
                                                        const ReplicaIo& replica_io,
                                                        const ClusterSpec* cluster = nullptr);
  ~Bucket();
  Bucket(const Bucket&) = delete;
  Bucket& operator=(const Bucket&) = delete;

  const std::string& name() const noexcept { return name_; }
  // 32 random hex digits, fixed for the bucket's life (the cluster map's uuid).
  const std::string& uuid() const noexcept { return uuid_; }
  // The cluster map's revision: 1 at creation, raised by each vbucket state
  // change made through SET_VBUCKET (configChanged()).
  uint64_t configRevision() const noexcept { return config_rev_.load(std::memory_order_acquire); }
  void configChanged() noexcept { config_rev_.fetch_add(1, std::memory_order_acq_rel); }
  // The vbucket's uuid: its failover table's newest entry (MutationSeqno
  // answers carry it beside the seqno, as kv_engine's vbucket uuid). Each
  // vbucket's table starts with one random entry at seqno 0. 0 past the map.
  uint64_t vbucketUuid(vbucket::Vbid vbid) const {
    return vbid < vbuckets_.size() ? vbuckets_.at(vbid).failovers().latestUuid() : 0;
  }
  // `vbid` became active: a new failover entry, a random uuid from its high
  // seqno on (kv_engine adds one when a vbucket becomes active).
  void startNewHistory(vbucket::Vbid vbid);
  config::Configuration& config() noexcept { return *config_; }
  const config::Configuration& config() const noexcept { return *config_; }
  vbucket::VBucketMap& vbuckets() noexcept { return vbuckets_; }
  const vbucket::VBucketMap& vbuckets() const noexcept { return vbuckets_; }
  const vbucket::BucketMemory& memory() const noexcept { return memory_; }
  vbucket::RecoveryStats recoveryStats() const { return recovery_->stats(); }
  durability::BucketDurability& durability() noexcept { return *durability_; }
  const durability::BucketDurability& durability() const noexcept { return *durability_; }

  // BucketDurability::write(), unless the bucket is at its quota and this is
  // not a delete: then kTemporaryFailure (recovery is requested if checkpoint
  // memory is above its lower mark) and `completion` is destroyed uncalled. The
  // flusher and the simulated replicas learn of what the write queued
  // through queued(), and read it on their own threads; nothing is reported
  // persisted or acknowledged here. A kPending write's `completion` is never
  // called on this thread inside this call (one satisfied at once is
  // deferred to a pool task), but may run on another thread (an ack, the
  // flusher's report, a timeout, that task) before this returns.
  durability::WriteResult write(vbucket::Vbid vbid, durability::WriteRequest request,
                                durability::Completion completion);

  // Told, on the writing thread, after each item queued in any of the
  // bucket's vbuckets (a DCP producer's streams have something to read), and
  // on the thread of a SET_VBUCKET that took a vbucket out of active (its
  // streams end).
  // Must not block nor call back into the bucket.
  class LogReader {
   public:
    virtual void logQueued(vbucket::Vbid vbid) noexcept = 0;

   protected:
    ~LogReader() = default;
  };
  // Registers `reader` until removeLogReader(), which returns once no call
  // to it is running. While none is registered a write pays one atomic load.
  void addLogReader(LogReader* reader);
  void removeLogReader(LogReader* reader);
  // Tells every LogReader that `vbid` changed (an item was queued, or its
  // state did). One atomic load when no reader is registered.
  void wakeLogReaders(vbucket::Vbid vbid) noexcept;

  // A replica's DCP_SEQNO_ACKNOWLEDGED; see BucketDurability::seqnoAcknowledged.
  bool seqnoAcknowledged(vbucket::Vbid vbid, const std::string& node, vbucket::Seqno seqno) {
    return durability_->seqnoAcknowledged(vbid, node, seqno);
  }

  // Answers every in-flight SyncWrite ambiguous with `reason`, refuses later
  // writes and stops the simulated replicas. Idempotent.
  void shutdown(durability::AmbiguousReason reason);

  // In a cluster, the replicas of each vbucket's chain (0 otherwise).
  size_t numReplicas() const noexcept { return num_replicas_; }

  // The simulated replica called `name`, or null. For tests.
  SimulatedReplica* simulatedReplica(std::string_view name) const;
  // How long each replica took to ack the prepares streamed to it over DCP.
  ReplicaAckLatencies& replicaAckLatencies() noexcept { return replica_ack_latencies_; }
  const ReplicaAckLatencies& replicaAckLatencies() const noexcept { return replica_ack_latencies_; }
  // The couchbase bucket's flusher; null for an ephemeral bucket.
  const vbucket::Flusher* flusher() const noexcept { return flusher_.get(); }
  // A couchbase bucket's store (null for an ephemeral bucket) and what its
  // warmup loaded.
  const kvstore::KVStore* store() const noexcept { return store_.get(); }
  const WarmupStats& warmupStats() const noexcept { return warmup_; }
  const std::vector<std::unique_ptr<SimulatedReplica>>& simulatedReplicas() const noexcept {
    return replicas_;
  }

 private:
  Bucket(BucketSpec spec, executor::ExecutorPool& pool,
         const durability::ReplicationTopology& topology);
  // Registers the fault keys' validators and listeners, and applies their
  // current values. Logs what it applied.
  void watchFaultKeys();
  // Registers the memory keys' validators and listeners and applies them.
  void watchMemoryKeys();
  // Opens the bucket's store in `data_dir` and warms up from it (logged).
  absl::Status openAndWarmUp(const std::filesystem::path& data_dir, const std::string& node_name);
  // Starts the flusher on the store (a couchbase bucket; an ephemeral one
  // has none), then watchFlusherKeys().
  void startFlusher();
  // Registers the flusher keys' listeners and applies them.
  void watchFlusherKeys();
  // The state the flusher stores beside `vbid`'s records up to `high_seqno`.
  std::string storedState(vbucket::Vbid vbid, vbucket::Seqno high_seqno) const;
  void applyMemoryLimits();
  // Sets every vbucket's chain and state from the cluster's derived map.
  absl::Status placeVbuckets(const ClusterSpec& cluster, const std::string& node_name);
  std::vector<std::string> simulatedNames() const;
  // A vbucket queued something (a write, a commit, an abort): the flusher and
  // each simulated replica's stream have something to read.
  void queued(vbucket::Vbid vbid, vbucket::QueueOp op) noexcept override;

  const std::string name_;
  const std::string uuid_;
  executor::ExecutorPool& pool_;
  std::atomic<uint64_t> config_rev_{1};
  size_t num_replicas_ = 0;
  std::unique_ptr<config::Configuration> config_;
  vbucket::BucketMemory memory_;  // outlives the vbuckets, which charge it
  // Cleared when destruction starts: items queued while members go (the
  // durability layer's teardown) must not reach readers already destroyed.
  // Declared before every member whose teardown may queue, so it outlives them.
  std::atomic<bool> listening_{true};
  vbucket::VBucketMap vbuckets_;
  std::unique_ptr<vbucket::CheckpointMemoryRecovery> recovery_;
  std::unique_ptr<durability::BucketDurability> durability_;
  // Before the flusher, which writes to it: closed after the flusher stops.
  std::unique_ptr<kvstore::KVStore> store_;
  WarmupStats warmup_;
  // After the durability layer, which it reports to: destroyed (and its task
  // stopped) first.
  ReplicaAckLatencies replica_ack_latencies_;
  std::unique_ptr<vbucket::Flusher> flusher_;
  std::vector<std::unique_ptr<SimulatedReplica>> replicas_;
  // The LogReaders (DCP producers); log_readers_count_ mirrors its size for
  // the lock-free check in queued().
  base::Mutex log_readers_mutex_;
  std::vector<LogReader*> log_readers_ ABSL_GUARDED_BY(log_readers_mutex_);
  std::atomic<size_t> log_readers_count_{0};
  config::Configuration::ListenerId mode_listener_ = 0;
  std::vector<config::Configuration::ListenerId> fault_listeners_;
  std::vector<config::Configuration::ListenerId> memory_listeners_;
};

}  // namespace syncwrite::server
