#include "vbucket/item.h"

namespace syncwrite::vbucket {

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
