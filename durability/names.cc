// The spellings of the durability layer's enums (sync_write.h, timeout_mode.h).
#include "durability/sync_write.h"
#include "durability/timeout_mode.h"

namespace syncwrite::durability {

std::string_view toString(WriteStatus status) noexcept {
  switch (status) {
    case WriteStatus::kCommitted:
      return "committed";
    case WriteStatus::kPending:
      return "pending";
    case WriteStatus::kInvalidLevel:
      return "invalid_level";
    case WriteStatus::kDurabilityImpossible:
      return "durability_impossible";
    case WriteStatus::kSyncWriteInProgress:
      return "sync_write_in_progress";
    case WriteStatus::kNotActive:
      return "not_active";
    case WriteStatus::kKeyExists:
      return "key_exists";
    case WriteStatus::kKeyNotFound:
      return "key_not_found";
    case WriteStatus::kTemporaryFailure:
      return "temporary_failure";
  }
  return "unknown";
}

std::string_view toString(AmbiguousReason reason) noexcept {
  switch (reason) {
    case AmbiguousReason::kTimeout:
      return "timeout";
    case AmbiguousReason::kLeftActive:
      return "left_active";
    case AmbiguousReason::kBucketDeleted:
      return "bucket_deleted";
    case AmbiguousReason::kShutdown:
      return "shutdown";
    case AmbiguousReason::kFlushed:
      return "flushed";
  }
  return "unknown";
}

std::string_view toString(TimeoutMode mode) noexcept {
  return mode == TimeoutMode::kPolling ? "polling" : "event-driven";
}

}  // namespace syncwrite::durability
