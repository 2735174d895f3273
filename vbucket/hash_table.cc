#include "vbucket/hash_table.h"

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
  for (const auto& [key, item] : items_) charge(key, -1);
}

void HashTable::charge(std::string_view key, int64_t sign) noexcept {
  if (memory_ != nullptr) memory_->addIndexBytes(sign * static_cast<int64_t>(slotBytes(key)));
}

bool HashTable::setCommitted(QueuedItem item) {
  QueuedItem replaced;  // released after the lock
  base::MutexLock lock(mutex_);
  auto [it, inserted] = items_.try_emplace(asAbsl(item->key()), nullptr);
  if (!inserted && it->second->seqno > item->seqno) return false;
  if (inserted) charge(it->first, +1);
  replaced = std::exchange(it->second, std::move(item));
  return true;
}

QueuedItem HashTable::find(std::string_view key) const {
  base::MutexLock lock(mutex_);
  auto it = items_.find(asAbsl(key));
  return it == items_.end() ? nullptr : it->second;
}

bool HashTable::erase(std::string_view key) {
  QueuedItem removed;
  base::MutexLock lock(mutex_);
  auto it = items_.find(asAbsl(key));
  if (it == items_.end()) return false;
  removed = std::move(it->second);
  charge(it->first, -1);
  items_.erase(it);
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
  for (const auto& [key, item] : items_) out.push_back(key);
  return out;
}

}  // namespace syncwrite::vbucket
