#include "vbucket/checkpoint.h"

namespace syncwrite::vbucket {

void EntryChain::append(EntryChain other) noexcept {
  if (other.empty()) return;
  if (empty()) {
    *this = other;
    return;
  }
  last->next = other.first;
  last = other.last;
  count += other.count;
  bytes += other.bytes;
}

void releaseEntry(CheckpointEntry* entry) noexcept {
  if (entry->own_allocation) {
    if (entry->resolution) {
      delete static_cast<ResolutionEntry*>(entry);
    } else {
      delete entry;
    }
    return;
  }
  // The entry lives in the block this reference keeps alive: move the
  // reference out first, so the block is freed (if it is) after the last
  // touch of the entry.
  const QueuedItem last = std::move(entry->item);
}

void freeChain(EntryChain chain) noexcept {
  CheckpointLink* link = chain.first;
  while (link != nullptr) {
    auto* entry = static_cast<CheckpointEntry*>(link);
    link = entry->next;
    releaseEntry(entry);
  }
}

void Checkpoint::checkLayout() noexcept {
  static_assert(
      sizeof(CheckpointEntry) == sizeof(CheckpointLink) + sizeof(QueuedItem) + sizeof(uint64_t) + 8,
      "CheckpointEntry's layout changed: see checkpoint.h");
  static_assert(alignof(Checkpoint) == 64 && sizeof(Checkpoint) == 64,
                "Checkpoint is meant to be exactly one cache line (see checkpoint.h)");
}

Checkpoint::~Checkpoint() {
  if (numItems() == 0) return;
  freeChain({static_cast<CheckpointEntry*>(sentinel_.next), static_cast<CheckpointEntry*>(tail_),
             numItems(), memoryBytes()});
}

void Checkpoint::append(CheckpointEntry* entry) noexcept {
  entry->next = nullptr;
  entry->ordinal = static_cast<uint32_t>(++appended_);
  if (entry->op == QueueOp::kPrepare) last_prepare_low_ = entry->ordinal & kPrepareOrdinalMask;
  bytes_appended_ += entry->bytes();
  entry->bytes_through = bytes_appended_;
  tail_->next = entry;
  tail_ = entry;
}

EntryChain Checkpoint::copyThenEraseThrough(CheckpointEntry* through) {
  EntryChain copy;
  for (CheckpointLink* link = sentinel_.next;; link = link->next) {
    const auto* entry = static_cast<const CheckpointEntry*>(link);
    CheckpointEntry* dup = entry->resolution
                               ? new ResolutionEntry(*static_cast<const ResolutionEntry*>(entry))
                               : new CheckpointEntry(*entry);
    dup->next = nullptr;
    dup->own_allocation = true;
    copy.append({dup, dup, 1, dup->bytes()});
    if (entry == through) break;
  }
  freeChain(detachThrough(through));
  return copy;
}

}  // namespace syncwrite::vbucket
