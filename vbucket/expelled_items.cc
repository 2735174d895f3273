#include "vbucket/expelled_items.h"

#include <utility>

namespace syncwrite::vbucket {

ExpelledItems::ExpelledItems(ExpelledItems&& other) noexcept
    : chain_(std::exchange(other.chain_, {})), removed_(std::move(other.removed_)) {}

ExpelledItems& ExpelledItems::operator=(ExpelledItems&& other) noexcept {
  if (this != &other) {
    release();
    chain_ = std::exchange(other.chain_, {});
    removed_ = std::move(other.removed_);
  }
  return *this;
}

size_t ExpelledItems::count() const noexcept {
  size_t n = chain_.count;
  for (const Checkpoint& c : removed_) n += c.numItems();
  return n;
}

size_t ExpelledItems::bytes() const noexcept {
  size_t n = chain_.bytes;
  for (const Checkpoint& c : removed_) n += c.memoryBytes();
  return n;
}

void ExpelledItems::forEach(const std::function<void(const LogRecord&)>& fn) const {
  // Removed checkpoints are older than the chain, and were removed oldest first.
  for (const Checkpoint& c : removed_) {
    for (const CheckpointLink* link = c.sentinel()->next; link != nullptr; link = link->next) {
      fn(static_cast<const CheckpointEntry*>(link)->record());
    }
  }
  for (const CheckpointLink* link = chain_.first; link != nullptr; link = link->next) {
    fn(static_cast<const CheckpointEntry*>(link)->record());
  }
}

void ExpelledItems::release() noexcept {
  freeChain(std::exchange(chain_, {}));
  removed_.clear();
}

}  // namespace syncwrite::vbucket
