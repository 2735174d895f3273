#include "vbucket/hash_table.h"

#include <cstdint>
#include <utility>

#include <absl/strings/string_view.h>

namespace syncwrite::vbucket {

namespace {
// Debian's Abseil has its own string_view type; heterogeneous lookup takes it.
absl::string_view asAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace

HashTable::~HashTable() {
  if (memory_ == nullptr) return;
  base::MutexLock lock(mutex_);
  charge(-static_cast<int64_t>(items_.size()));
}

void HashTable::charge(int64_t slots) noexcept {
  if (memory_ != nullptr) memory_->addIndexBytes(slots * static_cast<int64_t>(sizeof(Slot)));
}

bool HashTable::setCommitted(QueuedItem item) {
  QueuedItem replaced;  // released after the lock
  base::MutexLock lock(mutex_);
  // The key is the new item's, in its block: moving the item into a new
  // slot leaves the bytes where they are.
  bool inserted = false;
  auto it = items_.lazy_emplace(asAbsl(item->key()), [&](const auto& construct) {
    inserted = true;
    construct(Slot{std::move(item)});
  });
  if (inserted) {
    charge(+1);
    return true;
  }
  if (committedSeqno(*it->item) > committedSeqno(*item)) return false;
  replaced = std::exchange(it->item, std::move(item));
  return true;
}

QueuedItem HashTable::find(std::string_view key) const {
  base::MutexLock lock(mutex_);
  auto it = items_.find(asAbsl(key));
  return it == items_.end() ? nullptr : it->item;
}

void HashTable::prefetchTable() const noexcept {
  __builtin_prefetch(&mutex_);
  __builtin_prefetch(&items_);
}

void HashTable::prefetchSlot(std::string_view key) const {
  base::MutexLock lock(mutex_);
  items_.prefetch(asAbsl(key));
}

void HashTable::prefetchItem(std::string_view key) const {
  base::MutexLock lock(mutex_);
  // Never finds anything: SlotEq prefetches the candidates instead.
  (void)items_.find(PrefetchProbe{asAbsl(key)});
}

void HashTable::prefetchBlock(const Item* item) noexcept {
  // Addresses as integers: the lines after a small block may lie past its
  // allocation, which a prefetch may name (it never faults) but pointer
  // arithmetic may not. Nothing is ever read through them.
  const auto at = reinterpret_cast<uintptr_t>(item);
  for (uintptr_t offset : {0, 64, 128}) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): a prefetch address, see above
    __builtin_prefetch(reinterpret_cast<const void*>(at + offset));
  }
}

bool HashTable::erase(std::string_view key) {
  QueuedItem removed;  // released after the lock
  base::MutexLock lock(mutex_);
  auto it = items_.find(asAbsl(key));
  if (it == items_.end()) return false;
  // Copied, not moved out: the slot keeps its item, and so its key, until
  // erase() has run.
  removed = it->item;
  items_.erase(it);
  charge(-1);
  return true;
}

size_t HashTable::size() const {
  base::MutexLock lock(mutex_);
  return items_.size();
}

std::vector<std::string> HashTable::keys() const {
  base::MutexLock lock(mutex_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const Slot& slot : items_) out.emplace_back(slot.item->key());
  return out;
}

}  // namespace syncwrite::vbucket
