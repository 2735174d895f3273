#include "vbucket/item.h"

namespace syncwrite::vbucket {

// The size item.h states; docs/memory.md's per-write figures count on it.
// The two sizes, cas and seqno, then meta, op, deleted, block and refs in one
// 16-byte tail.
static_assert(sizeof(Item) == 2 * sizeof(uint32_t) + 2 * sizeof(uint64_t) + 16,
              "Item's layout changed: see item.h");

std::string_view toString(QueueOp op) noexcept {
  switch (op) {
    case QueueOp::kMutation:
      return "mutation";
    case QueueOp::kPrepare:
      return "prepare";
    case QueueOp::kCommit:
      return "commit";
    case QueueOp::kAbort:
      return "abort";
  }
  return "unknown";
}

}  // namespace syncwrite::vbucket
