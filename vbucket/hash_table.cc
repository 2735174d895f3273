#include "vbucket/hash_table.h"

#include <utility>

#include <absl/strings/string_view.h>

namespace syncwrite::vbucket {

namespace {
// Debian's Abseil has its own string_view type; heterogeneous lookup takes it.
absl::string_view asAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }
}  // namespace

bool HashTable::setCommitted(QueuedItem item) {
  QueuedItem replaced;  // released after the lock
  base::MutexLock lock(mutex_);
  auto [it, inserted] = items_.try_emplace(item->key, nullptr);
  if (!inserted && it->second->seqno > item->seqno) return false;
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
