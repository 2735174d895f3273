#include "durability/resolved_writes.h"

#include <cstdio>
#include <exception>

namespace syncwrite::durability {

void ResolvedWrites::notify() noexcept {
  // Taken out first: a completion may (through the layer) resolve more writes
  // into another batch, never into this one, but clearing before calling
  // keeps this batch consistent whatever a completion does.
  absl::InlinedVector<Entry, 1> writes = std::move(writes_);
  writes_.clear();
  for (Entry& e : writes) {
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
}

}  // namespace syncwrite::durability
