// VBucket: one partition of a bucket — its id, its state, its committed items
// and its log of queued changes.
//
// What the layer above uses (it attaches a durability monitor to each active
// vbucket; this layer knows nothing of durability):
//  - id() and state(), and a state-change notification (addStateListener);
//  - checkpointManager().queue(op, key, value, cas): queues a mutation,
//    prepare, commit or abort and assigns its seqno (the vbucket's seqno
//    generator: 1, 2, 3, … in queue order); highSeqno() is the last one;
//  - hashTable().setCommitted(item): makes a committed item visible.
//
// State-change notification: after setState() changes the state, every
// listener is called with (vbucket, old state, new state)
//  - on the thread that called setState(), after state() returns the new
//    state, in registration order;
//  - with no lock of the vbucket's data held (hash table, checkpoints): a
//    listener may queue items and read or write the hash table. The one lock
//    held is the vbucket's transition mutex, which serialises setState(): a
//    listener sees every change, in order, never two at once;
//  - a listener must not call setState() on the same vbucket (it would be a
//    change inside a change; it throws std::logic_error), nor block waiting
//    for a thread that calls setState() on it;
//  - removeStateListener(id) returns only once that listener is not running
//    (except when called from inside a listener of this vbucket, on the
//    notifying thread), so what the listener captured may be destroyed then;
//  - if a listener throws, the state stays changed, the other listeners still
//    run, and setState() rethrows the first exception afterwards.
//
// Thread-safety: every member may be called from any thread. state() and
// highSeqno() are single atomic loads. An idle vbucket owns one heap block
// (its open checkpoint); see VBucketMap for the measured figure.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "vbucket/checkpoint_manager.h"
#include "vbucket/failover_table.h"
#include "vbucket/hash_table.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::vbucket {

class VBucket {
 public:
  using StateListener =
      std::function<void(VBucket& vb, VBucketState old_state, VBucketState new_state)>;
  using ListenerId = uint64_t;

  VBucket(Vbid id, VBucketState initial_state, CheckpointOptions checkpoint_options = {});
  VBucket(const VBucket&) = delete;
  VBucket& operator=(const VBucket&) = delete;

  Vbid id() const noexcept { return id_; }
  VBucketState state() const noexcept { return state_.load(std::memory_order_acquire); }

  // Changes the state and notifies listeners (see the file comment). Returns
  // false, notifying no one, when the state already was `new_state`.
  bool setState(VBucketState new_state);

  // Registers `fn` for every later state change. Ids are never reused.
  ListenerId addStateListener(StateListener fn);
  // False when `id` is not registered. See the file comment for when it
  // returns.
  bool removeStateListener(ListenerId id);

  HashTable& hashTable() noexcept { return hash_table_; }
  const HashTable& hashTable() const noexcept { return hash_table_; }
  CheckpointManager& checkpointManager() noexcept { return checkpoints_; }
  const CheckpointManager& checkpointManager() const noexcept { return checkpoints_; }

  // The seqno of the last item queued in this vbucket (0 before the first).
  Seqno highSeqno() const noexcept { return checkpoints_.highSeqno(); }

  // Its history of writers (failover_table.h): empty until the owner seeds
  // it; this layer never changes it.
  FailoverTable& failovers() noexcept { return failovers_; }
  const FailoverTable& failovers() const noexcept { return failovers_; }

 private:
  bool onNotifyingThread() const noexcept;

  const Vbid id_;
  std::atomic<VBucketState> state_;

  // Serialises setState() and is held while listeners run.
  base::Mutex transition_mutex_ ABSL_ACQUIRED_BEFORE(listeners_mutex_);
  std::atomic<std::thread::id> notifying_thread_{};

  // Guards the registrations only (held briefly, never while calling one).
  base::Mutex listeners_mutex_;
  std::map<ListenerId, std::shared_ptr<const StateListener>> listeners_
      ABSL_GUARDED_BY(listeners_mutex_);
  ListenerId next_listener_id_ ABSL_GUARDED_BY(listeners_mutex_) = 1;

  HashTable hash_table_;
  CheckpointManager checkpoints_;
  FailoverTable failovers_;
};

}  // namespace syncwrite::vbucket
