#include "server/protocol/status.h"

#include <array>

namespace syncwrite::server::protocol {

namespace {
struct StatusText {
  Status status;
  std::string_view name;
  std::string_view description;
};

// Descriptions paraphrase kv_engine docs/BinaryProtocol.md "Response Status".
constexpr std::array<StatusText, 18> kStatuses{{
    {Status::kSuccess, "Success", "success"},
    {Status::kKeyNotFound, "KeyNotFound", "not found"},
    {Status::kKeyExists, "KeyExists", "key exists"},
    {Status::kTooBig, "TooBig", "value too large"},
    {Status::kEinval, "Einval", "invalid arguments"},
    {Status::kNotStored, "NotStored", "not stored"},
    {Status::kNotMyVbucket, "NotMyVbucket", "not my vbucket"},
    {Status::kNoBucket, "NoBucket", "no bucket"},
    {Status::kUnknownCommand, "UnknownCommand", "unknown command"},
    {Status::kEnomem, "Enomem", "out of memory"},
    {Status::kNotSupported, "NotSupported", "not supported"},
    {Status::kInternalError, "InternalError", "internal error"},
    {Status::kBusy, "Busy", "busy"},
    {Status::kEtmpfail, "Etmpfail", "temporary failure"},
    {Status::kDurabilityInvalidLevel, "DurabilityInvalidLevel", "invalid durability level"},
    {Status::kDurabilityImpossible, "DurabilityImpossible", "durability impossible"},
    {Status::kSyncWriteInProgress, "SyncWriteInProgress", "sync write in progress"},
    {Status::kSyncWriteAmbiguous, "SyncWriteAmbiguous", "sync write ambiguous"},
}};

const StatusText* lookup(Status status) noexcept {
  for (const auto& entry : kStatuses) {
    if (entry.status == status) return &entry;
  }
  return nullptr;
}
}  // namespace

std::string_view toString(Status status) noexcept {
  const StatusText* entry = lookup(status);
  return entry ? entry->name : "Unknown";
}

std::string_view describe(Status status) noexcept {
  const StatusText* entry = lookup(status);
  return entry ? entry->description : "unknown status";
}

}  // namespace syncwrite::server::protocol
