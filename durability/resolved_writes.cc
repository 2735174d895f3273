#include "durability/resolved_writes.h"

#include <cstdio>
#include <exception>

namespace syncwrite::durability {

void ResolvedWrites::notify() noexcept {
  if (writes_.empty()) return;
  // Called in place: a completion may (through the layer) resolve more writes,
  // but into a batch of its own call, never into this one, which only its
  // owner can reach.
  for (Entry& e : writes_) {
    if (!e.completion) continue;
    try {
      e.completion(e.resolution);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "syncwrite durability: completion of vb %u seqno %llu threw: %s\n",
                   static_cast<unsigned>(e.resolution.vbid),
                   static_cast<unsigned long long>(e.resolution.prepare_seqno), ex.what());
    } catch (...) {
      std::fprintf(stderr, "syncwrite durability: completion of vb %u seqno %llu threw\n",
                   static_cast<unsigned>(e.resolution.vbid),
                   static_cast<unsigned long long>(e.resolution.prepare_seqno));
    }
  }
  // erase, not clear: absl's clear() frees the heap block, and a caller that
  // notifies after each vbucket of a pass reuses it.
  writes_.erase(writes_.begin(), writes_.end());
}

}  // namespace syncwrite::durability
