#include "vbucket/vbucket.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace syncwrite::vbucket {

namespace {
CheckpointOptions withVbid(CheckpointOptions options, Vbid id) {
  options.vbid = id;
  return options;
}
}  // namespace

VBucket::VBucket(Vbid id, VBucketState initial_state, CheckpointOptions checkpoint_options)
    : id_(id),
      state_(initial_state),
      hash_table_(checkpoint_options.memory),
      checkpoints_(withVbid(checkpoint_options, id)) {}

bool VBucket::onNotifyingThread() const noexcept {
  return notifying_thread_.load(std::memory_order_acquire) == std::this_thread::get_id();
}

bool VBucket::setState(VBucketState new_state) {
  if (onNotifyingThread()) {
    throw std::logic_error("vb:" + std::to_string(id_) +
                           " setState() called from one of its own state listeners");
  }
  base::MutexLock transition(transition_mutex_);
  const VBucketState old_state = state_.exchange(new_state, std::memory_order_acq_rel);
  if (old_state == new_state) return false;

  std::vector<std::shared_ptr<const StateListener>> snapshot;
  {
    base::MutexLock lock(listeners_mutex_);
    snapshot.reserve(listeners_.size());
    for (const auto& [id, fn] : listeners_) snapshot.push_back(fn);
  }
  notifying_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  std::exception_ptr first_error;
  for (const auto& fn : snapshot) {
    try {
      (*fn)(*this, old_state, new_state);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  notifying_thread_.store(std::thread::id(), std::memory_order_release);
  if (first_error) std::rethrow_exception(first_error);
  return true;
}

VBucket::ListenerId VBucket::addStateListener(StateListener fn) {
  base::MutexLock lock(listeners_mutex_);
  const ListenerId id = next_listener_id_++;
  listeners_.emplace(id, std::make_shared<const StateListener>(std::move(fn)));
  return id;
}

bool VBucket::removeStateListener(ListenerId id) {
  std::shared_ptr<const StateListener> removed;  // destroyed after the wait below
  {
    base::MutexLock lock(listeners_mutex_);
    auto it = listeners_.find(id);
    if (it == listeners_.end()) return false;
    removed = std::move(it->second);
    listeners_.erase(it);
  }
  // A notification in progress may hold a snapshot with this listener: wait
  // for it to end, unless it is this very thread's (it would wait for itself).
  if (!onNotifyingThread()) base::MutexLock wait(transition_mutex_);
  return true;
}

}  // namespace syncwrite::vbucket
