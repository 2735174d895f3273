// BucketDurability: the durability layer of one bucket — the way the server
// (or any embedder) writes, acknowledges and times out SyncWrites.
//
// One ActiveDurabilityMonitor per vbucket (tracking writes while the vbucket
// is active) and the timeout mechanism durability_timeout_mode chooses:
// event-driven (default), one BucketTimeoutTask per bucket, asleep while no
// vbucket has a SyncWrite and told, with the executor's asynchronous snooze,
// whenever a vbucket's next deadline gets earlier; or polling, one
// PollingTimeoutTask per bucket every durability_timeout_task_interval. Both
// visit only the vbuckets of the in-flight set (a bit per vbucket with
// SyncWrites). Every dynamic key applies to the live bucket at once; a mode
// switch starts the new mechanism before it stops the old, and the deadlines
// live in the monitors, so no write misses its deadline, none is aborted
// twice (it leaves its monitor when aborted), and none early (only once its
// deadline is strictly in the past). A vbucket that leaves active queues an
// abort for each of its writes, in seqno order, and answers them ambiguous
// (kLeftActive), on the thread that called setState().
//
// Time (TimeoutClocks): a deadline is the `deadline` clock's now() at write()
// plus the timeout; the event-driven timer reads the same clock, the polling
// visitor the `polling` clock, which must never run ahead of it. A check on a
// lagging clock is only late; a deadline stamped with one (coarse) starts
// early by the lag. The server passes the precise clock for both
// (docs/benchmarks.md compares the coarse choices). With a manual clock
// nothing fires by itself: advance it and call checkTimeoutsNow().
//
// Memory: 1,525,636 bytes of requested heap for 1024 idle active vbuckets
// event-driven, 1,525,979 polling (~1,490 a vbucket: its monitor and
// counters, plus per bucket the tasks, in-flight set, histograms, settings
// and passive-monitor map), beyond the vbuckets' own;
// g++ 12, x86-64, pinned by tests/idle_memory_test.cc.
//
// Thread-safety: every member may be called from any thread. Completions are
// called as sync_write.h says, with no lock of this layer held (a state
// listener's, though, under its vbucket's transition mutex); one satisfied by
// the call that added it is called from an executor task, never inside
// write(). Lifetime: the configuration, the vbucket map and the pool must
// outlive this object. The destructor calls shutdown(kBucketDeleted), then
// unregisters the deferred completions' tasks (those not yet run notify from
// their destructors).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/status/status.h>

#include "clock/clock_ref.h"
#include "config/configuration.h"
#include "durability/commit_latency.h"
#include "durability/passive_durability_monitor.h"
#include "durability/resolved_writes.h"
#include "durability/sync_write.h"
#include "durability/timeout_lateness.h"
#include "durability/timeout_mode.h"
#include "durability/topology.h"
#include "executor/executor_pool.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::durability {

// What an operator wants to know about a bucket's SyncWrites. Counters are
// totals since the bucket was created.
struct DurabilityStats {
  TimeoutMode mode = TimeoutMode::kEventDriven;
  uint64_t in_flight = 0;        // SyncWrites accepted and not yet resolved
  uint64_t committed = 0;        // SyncWrites committed
  uint64_t aborted_timeout = 0;  // aborts queued because the deadline passed
  uint64_t ambiguous_other = 0;  // answered ambiguous for any other reason
  // Aborts queued because the vbucket left active or the bucket was flushed
  // (with aborted_timeout: every abort in the log).
  uint64_t aborted_other = 0;
  // Answered ambiguous at their own deadline while an older write with a
  // later deadline headed the vbucket; their prepares commit or abort later,
  // in order (counted in committed / aborted_timeout then, not answered).
  uint64_t answered_behind_head = 0;
  uint64_t committed_after_answer = 0;  // of those, committed later
  // Prepares a promotion took over from this node's replica copy, committed
  // since (promote()); counted in committed too.
  uint64_t recommitted = 0;
  uint64_t plain_writes = 0;            // writes committed at once
  uint64_t refused = 0;                 // writes refused (any status but kCommitted/kPending)
  uint64_t timeout_task_runs = 0;       // runs of this bucket's timeout tasks, both modes
  uint64_t timeout_rearms = 0;          // event-driven: timer armed earlier by a write
  uint64_t timeout_slices_yielded = 0;  // event-driven: runs cut at durability_timeout_slice
  // How late timed-out writes were answered after their deadlines, in µs
  // (durability/timeout_lateness.h: upper bounds from log2 buckets; max exact).
  uint64_t timeout_late_p50_us = 0;
  uint64_t timeout_late_p99_us = 0;
  uint64_t timeout_late_max_us = 0;
  uint64_t mode_switches = 0;   // changes of durability_timeout_mode applied
  uint64_t timeout_tasks = 0;   // timeout tasks scheduled now (1 per bucket in either mode)
  uint64_t polling_passes = 0;  // completed passes of the polling task (all of them)
  // By level (Level's value), summed over the vbuckets: SyncWrites accepted,
  // committed (promoted prepares included) and aborted (any reason).
  std::array<uint64_t, kLevelCount> accepted_by_level{};
  std::array<uint64_t, kLevelCount> committed_by_level{};
  std::array<uint64_t, kLevelCount> aborted_by_level{};
  // Clients answered SyncWriteAmbiguous, by AmbiguousReason's value.
  std::array<uint64_t, kAmbiguousReasonCount> ambiguous_by_reason{};
  // By TimeoutMode's value: its task's runs, and the lateness of the
  // timeouts it answered (timeout_late_* above are of both together).
  std::array<uint64_t, 2> timeout_task_runs_by_mode{};
  std::array<TimeoutLateness::Snapshot, 2> timeout_lateness_by_mode{};
};

// See "Time" above.
struct TimeoutClocks {
  // The event-driven timer's default slack: a timeout is answered at most
  // this much (plus scheduling) after its deadline, and the deadlines of a
  // bucket that fall in one slot of it share a timer run. docs/benchmarks.md
  // (timeout_precision) shows what it saves and costs.
  static constexpr clock::Duration kDefaultTimerSlack = std::chrono::milliseconds(2);

  clock::ClockRef deadline;  // stamps deadlines; read by the event-driven timer
  clock::ClockRef polling;   // read by the polling visitor; never ahead of `deadline`
  // Event-driven: deadlines are rounded up to a multiple of this on the steady
  // timeline (bucket_timeout_task.h, "Never early"); zero: not rounded.
  clock::Duration timer_slack = kDefaultTimerSlack;
};

class BucketDurability {
 public:
  // `name` labels the bucket's tasks ("<name>: durability timeouts"). Reads
  // the durability keys of `bucket_config` and listens for changes to the
  // dynamic ones. `topology` is every vbucket's replication chain; its active
  // node is this node. Starts the timeout mechanism of the configured mode.
  BucketDurability(std::string name, config::Configuration& bucket_config,
                   vbucket::VBucketMap& vbuckets, executor::ExecutorPool& pool,
                   const ReplicationTopology& topology, TimeoutClocks clocks);
  // One clock for both (tests, benchmarks).
  BucketDurability(std::string name, config::Configuration& bucket_config,
                   vbucket::VBucketMap& vbuckets, executor::ExecutorPool& pool,
                   const ReplicationTopology& topology, clock::ClockRef clock)
      : BucketDurability(std::move(name), bucket_config, vbuckets, pool, topology,
                         TimeoutClocks{clock, clock, TimeoutClocks::kDefaultTimerSlack}) {}
  ~BucketDurability();
  BucketDurability(const BucketDurability&) = delete;
  BucketDurability& operator=(const BucketDurability&) = delete;

  // Writes to `vbid`. See sync_write.h for the statuses; a kPending write's
  // `completion` is called exactly once later, any other status means it is
  // never called (and is destroyed before write() returns).
  // Cost: one monitor lock, a checkpoint queue, and for a plain write a hash
  // table update. A SyncWrite that makes its vbucket's next deadline earlier
  // (its first write, or a shorter timeout than the writes before it) tells
  // the bucket's event-driven timer, which costs one atomic load unless the
  // deadline is earlier than the one the timer is armed for (then a CAS and
  // an asynchronous snooze).
  // `completion` may be empty when mayPend(request) is false: the write is
  // then plain even if durability_min_level rose in between (a concurrent
  // change may apply to the write or not); an empty completion with
  // durability requirements is refused kInvalidLevel.
  WriteResult write(Vbid vbid, WriteRequest request, Completion completion);

  // True when write() may answer kPending for `request` and so needs a
  // completion: it has durability requirements, or durability_min_level is
  // above none. Lets a caller skip building a completion for a plain write.
  // Cost: one relaxed atomic load.
  bool mayPend(const WriteRequest& request) const noexcept;

  // The replica `node` has every prepare of `vbid` up to `prepared_seqno`
  // (DCP_SEQNO_ACKNOWLEDGED). Commits, in seqno order, every write this
  // satisfies, and calls their completions before returning. False, changing
  // nothing, when `vbid` is not an active vbucket of this bucket; false when
  // `node` is not a replica of its topology, whose ack is kept for a
  // setTopology() that adds the node (as kv_engine, AckState::seqnoAck()).
  bool seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno prepared_seqno);
  // As above, but the completions of the writes it commits are appended to
  // `resolved`, for the caller to notify once it has sent a batch of acks
  // (the simulated replica: one hand-off to each connection per batch
  // rather than per ack). The caller must not hold a durability lock when
  // it notifies.
  bool seqnoAcknowledged(Vbid vbid, const std::string& node, Seqno prepared_seqno,
                         ResolvedWrites& resolved);

  // This node has persisted `vbid` up to `persisted_seqno`: writes whose level
  // needs persistence on the active may now commit (as above). On a replica
  // vbucket with a passive monitor, its HPS may move over persist_to_majority
  // prepares: the passive ack listener is then told, on this thread.
  void notifyLocalPersistence(Vbid vbid, Seqno persisted_seqno);

  // The passive monitor of `vbid` (passive_durability_monitor.h): what a
  // replica stream feeds while the vbucket is a replica here. Made at the
  // first call and kept for the bucket's life (a vbucket with none costs
  // nothing). Requires vbid < the map's size (std::out_of_range).
  PassiveDurabilityMonitor& passiveMonitor(Vbid vbid);
  // The high prepared seqno `vbid`'s passive monitor holds (what this node
  // acked as its replica), 0 when it never had one or past the map. Makes no
  // monitor. What a failover compares replicas by (ns_server's
  // find_max_replica, with the high seqno).
  Seqno replicaHighPreparedSeqno(Vbid vbid) const;
  // Promotes replica vbucket `vbid` to active with `topology` (whose active
  // is this node): every prepare its passive monitor holds that the old
  // active had not completed becomes a SyncWrite with no timeout and no
  // client (ActiveDurabilityMonitor::adoptPrepares), then the vbucket becomes
  // active and what the topology's acks already satisfy commits. The rest
  // commit as acks arrive; none is ever aborted by a timeout. Without a
  // topology the prepares are taken over the same way but wait, with new
  // SyncWrites refused kTemporaryFailure, until setTopology() gives the chain
  // (awaitTopology()). Returns how many it took over. FailedPrecondition,
  // changing nothing, when the vbucket is not a replica; InvalidArgument
  // when the topology's active is another node (`this_node`) or past the map.
  absl::StatusOr<size_t> promote(Vbid vbid, const std::string& this_node,
                                 std::optional<ReplicationTopology> topology);
  // Rolls replica vbucket `vbid` back to seqno 0, as kv_engine's ephemeral
  // buckets roll back (EphemeralBucket::doRollback: the vbucket is reset, not
  // rewound): its passive monitor, committed items and log are emptied, its
  // high seqno becomes 0 and its cursors read from what is queued next, so a
  // stream from 0 can refill it. Returns the items it dropped.
  // FailedPrecondition, changing nothing, when `vbid` is not a replica here;
  // InvalidArgument past the map. O(items). Readers racing it may still see
  // an item it is dropping.
  absl::StatusOr<size_t> resetReplica(Vbid vbid);
  // True while `key` in `vbid` has a prepare a promotion took over that has
  // not committed or aborted yet: a read answers SyncWriteReCommitInProgress.
  // One atomic load while no promotion's prepare is pending in the bucket.
  bool reCommitInProgress(Vbid vbid, std::string_view key) const;

  // Told (vbid, HPS) when local persistence moved a replica vbucket's HPS, so
  // that its stream acknowledges it. Set before streams start (not
  // synchronised against notifyLocalPersistence); empty: nobody is told.
  using PassiveAckListener = std::function<void(Vbid vbid, Seqno high_prepared_seqno)>;
  void setPassiveAckListener(PassiveAckListener listener);

  // Replaces every vbucket's topology (acks of nodes still present are kept);
  // writes the new topology satisfies commit. Writes already accepted stay
  // tracked even if the new topology makes durability impossible; they will
  // time out.
  void setTopology(const ReplicationTopology& topology);
  ReplicationTopology topology() const;
  // As above for one vbucket, whose chain may differ from the others' (a
  // cluster's vbucket map). Requires vbid < the map's size (std::out_of_range).
  void setTopology(Vbid vbid, ReplicationTopology topology);
  ReplicationTopology topology(Vbid vbid) const;
  // ActiveDurabilityMonitor::awaitTopology() for `vbid`: an active vbucket
  // whose chain does not name this node as its active refuses SyncWrites
  // kTemporaryFailure until setTopology(vbid, ...). Past the map:
  // std::out_of_range.
  void awaitTopology(Vbid vbid);
  bool awaitingTopology(Vbid vbid) const;
  // The prepares `vbid`'s active monitor tracks, oldest first, with their
  // levels (ActiveDurabilityMonitor::trackedPrepares). Empty past the map.
  std::vector<std::pair<vbucket::QueuedItem, Level>> trackedPrepares(Vbid vbid) const;
  // The replication stream of `node` closed: what it acknowledged while
  // outside the topology (seqnoAcknowledged() returned false, and kept it)
  // no longer counts when a topology adds it. Call it when the node's
  // stream goes, as kv_engine drops such acks with the stream, and after
  // that stream's last seqnoAcknowledged() has returned (one still running
  // could keep its ack again). Each vbucket is done under its own lock: a
  // setTopology() running meanwhile may take the ack in some vbuckets.
  void forgetQueuedAcks(const std::string& node);

  // Empties the bucket, as memcached's FLUSH: queues an abort for every
  // SyncWrite in flight and answers it ambiguous (kFlushed) — nothing is
  // dropped silently, and no prepare is left unresolved in the log — then deletes
  // every committed item with a plain delete (queued like any other, so
  // readers of the log see them). Writes racing the flush may survive it.
  // Returns the items deleted. Cost: O(items).
  size_t flush();

  // Looks for expired writes now, in the current mode: wakes the polling task
  // for a pass, or the event-driven timer when a vbucket has writes. Returns
  // at once; the timeouts are processed on the pool. For tests that advance a
  // manual clock, and for an embedder whose clock jumped.
  void checkTimeoutsNow();

  // Answers every in-flight SyncWrite ambiguous with `reason`, refuses every
  // later write (kNotActive), and stops the timeout tasks. The first call
  // does it all: under the tasks' lock it cancels the tasks, closes every
  // monitor and takes its writes; then, unlocked, it waits for a timeout run
  // in progress (unregisterTaskable) and calls the completions. When it
  // returns, every write in flight when it began has been answered — by it,
  // or by a timeout run it waited for — except one that an ack, persistence
  // report or flush on another thread resolved and has yet to notify, or
  // one satisfied at its add whose deferred completion task has not run.
  // A call made meanwhile from another thread waits until the first has
  // returned (std::call_once), and so has the same guarantee; a later call
  // returns at once, changing nothing. Must not be called from a Completion
  // or while holding a lock that a completion or a timeout run takes.
  void shutdown(AmbiguousReason reason);

  TimeoutMode mode() const noexcept;
  DurabilityStats stats() const;
  // For each replica named by some active vbucket's topology, the tracked
  // SyncWrites of those vbuckets it has not acknowledged yet (what it holds
  // back), summed over the vbuckets; in name order. O(vbuckets × replicas).
  std::vector<std::pair<std::string, uint64_t>> unackedByReplica() const;
  // For each replica named by some active vbucket's topology, how many
  // seqnos its acks are behind those vbuckets' last prepares
  // (ActiveDurabilityMonitor::ackLagByReplica), summed; in name order.
  // O(vbuckets × replicas).
  std::vector<std::pair<std::string, uint64_t>> ackLagByReplica() const;
  // The latency from acceptance to commit of the SyncWrites of `level` that
  // had a client (commit_latency.h), since construction.
  CommitLatency::Snapshot commitLatency(Level level) const noexcept;

  // Test and diagnostic views. The earliest deadline (on the injected clock)
  // the bucket's event-driven timer is armed for: clock::kNever when asleep
  // forever or in polling mode. A deadline that became later is still
  // armed until the timer has run.
  clock::TimePoint armedDeadline() const;
  // The event-driven timer's slack, or Duration::max() when polling.
  clock::Duration timerSlack() const;
  // Whether `vbid` is in the set of vbuckets with SyncWrites in flight.
  bool inFlightSetHas(Vbid vbid) const;
  // The oldest in-flight write's deadline of `vbid` (kNever when none).
  clock::TimePoint headDeadline(Vbid vbid) const;
  // The earliest deadline of `vbid` whose client is still waiting, the head's
  // or one behind it (kNever when none): what the timer is armed for.
  clock::TimePoint nextDeadline(Vbid vbid) const;
  // SyncWrites in flight in `vbid`.
  size_t inFlight(Vbid vbid) const;
  // The polling task's interval, or Duration::max() when not polling.
  clock::Duration pollingInterval() const;
  // How long the polling task's visitor runs before it yields
  // (max_vbucket_visit_duration), or Duration::max() when not polling.
  clock::Duration pollingMaxChunkDuration() const;

 private:
  struct Impl;
  void shutdownOnce(AmbiguousReason reason);
  std::unique_ptr<Impl> impl_;
};

}  // namespace syncwrite::durability
