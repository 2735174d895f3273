#include "server/protocol/status.h"

#include <array>
#include <optional>

namespace syncwrite::server::protocol {

namespace {
struct StatusText {
  Status status;
  std::string_view name;
  std::string_view description;
  std::string_view attributes;  // kv_engine error map attributes
};

// Descriptions paraphrase kv_engine docs/BinaryProtocol.md "Response Status".
// Attributes are exactly those of kv_engine's
// etc/couchbase/kv/error_maps/error_map_v2.json (revision 9), in its order.
constexpr std::array<StatusText, 48> kStatuses{{
    {Status::kSuccess, "Success", "success", "success"},
    {Status::kKeyNotFound, "KeyNotFound", "not found", "item-only"},
    {Status::kKeyExists, "KeyExists", "key exists", "item-only"},
    {Status::kTooBig, "TooBig", "value too large", "item-only invalid-input"},
    {Status::kEinval, "Einval", "invalid arguments", "internal invalid-input"},
    {Status::kNotStored, "NotStored", "not stored", "internal item-only"},
    {Status::kDeltaBadval, "DeltaBadval", "non-numeric value for increment or decrement",
     "item-only invalid-input"},
    {Status::kNotMyVbucket, "NotMyVbucket", "not my vbucket", "fetch-config invalid-input"},
    {Status::kNoBucket, "NoBucket", "no bucket", "conn-state-invalidated"},
    {Status::kAuthError, "AuthError", "authentication error", "conn-state-invalidated auth"},
    {Status::kAuthContinue, "AuthContinue", "continue authentication", "special-handling"},
    {Status::kRollback, "Rollback", "rollback", "dcp special-handling"},
    {Status::kNoAccess, "NoAccess", "no access", "support"},
    {Status::kUnknownCommand, "UnknownCommand", "unknown command", "support"},
    {Status::kEnomem, "Enomem", "out of memory", "temp retry-later"},
    {Status::kNotSupported, "NotSupported", "not supported", "support"},
    {Status::kInternalError, "InternalError", "internal error", "internal conn-state-invalidated"},
    {Status::kBusy, "Busy", "busy", "temp retry-now"},
    {Status::kEtmpfail, "Etmpfail", "temporary failure", "temp retry-now"},
    {Status::kXattrEinval, "XattrEinval", "invalid extended attribute", "invalid-input"},
    {Status::kDurabilityInvalidLevel, "DurabilityInvalidLevel", "invalid durability level",
     "invalid-input"},
    {Status::kDurabilityImpossible, "DurabilityImpossible", "durability impossible",
     "item-only invalid-input"},
    {Status::kSyncWriteInProgress, "SyncWriteInProgress", "sync write in progress",
     "item-only retry-later"},
    {Status::kSyncWriteAmbiguous, "SyncWriteAmbiguous", "sync write ambiguous", "item-only"},
    {Status::kSyncWriteReCommitInProgress, "SyncWriteReCommitInProgress",
     "sync write re-commit in progress", "item-only retry-later"},
    {Status::kSubdocPathEnoent, "SubdocPathEnoent", "path not found", "subdoc item-only"},
    {Status::kSubdocPathMismatch, "SubdocPathMismatch", "path and document disagree on structure",
     "subdoc item-only"},
    {Status::kSubdocPathEinval, "SubdocPathEinval", "invalid path", "subdoc invalid-input"},
    {Status::kSubdocPathE2big, "SubdocPathE2big", "path too large", "subdoc invalid-input"},
    {Status::kSubdocDocE2deep, "SubdocDocE2deep", "path too deep", "subdoc invalid-input"},
    {Status::kSubdocValueCantinsert, "SubdocValueCantinsert", "value cannot be inserted",
     "subdoc invalid-input"},
    {Status::kSubdocDocNotJson, "SubdocDocNotJson", "document is not JSON", "subdoc item-only"},
    {Status::kSubdocNumErange, "SubdocNumErange", "existing number out of range",
     "subdoc item-only"},
    {Status::kSubdocDeltaEinval, "SubdocDeltaEinval", "invalid delta", "subdoc item-only"},
    {Status::kSubdocPathEexists, "SubdocPathEexists", "path already exists", "subdoc item-only"},
    {Status::kSubdocValueEtoodeep, "SubdocValueEtoodeep", "value too deep",
     "subdoc invalid-input item-only"},
    {Status::kSubdocInvalidCombo, "SubdocInvalidCombo", "invalid combination of commands",
     "subdoc invalid-input"},
    {Status::kSubdocMultiPathFailure, "SubdocMultiPathFailure", "one or more paths failed",
     "subdoc special-handling"},
    {Status::kSubdocSuccessDeleted, "SubdocSuccessDeleted", "success on a deleted document",
     "item-deleted success subdoc"},
    {Status::kSubdocXattrInvalidFlagCombo, "SubdocXattrInvalidFlagCombo",
     "invalid xattr flag combination", "subdoc invalid-input"},
    {Status::kSubdocXattrInvalidKeyCombo, "SubdocXattrInvalidKeyCombo",
     "invalid xattr key combination", "subdoc invalid-input"},
    {Status::kSubdocXattrUnknownMacro, "SubdocXattrUnknownMacro", "unknown macro",
     "subdoc invalid-input"},
    {Status::kSubdocXattrUnknownVattr, "SubdocXattrUnknownVattr", "unknown virtual xattr",
     "subdoc invalid-input"},
    {Status::kSubdocXattrCantModifyVattr, "SubdocXattrCantModifyVattr",
     "virtual xattrs cannot be modified", "subdoc invalid-input"},
    {Status::kSubdocMultiPathFailureDeleted, "SubdocMultiPathFailureDeleted",
     "one or more paths failed on a deleted document", "item-deleted subdoc special-handling"},
    {Status::kSubdocInvalidXattrOrder, "SubdocInvalidXattrOrder", "xattr specs must come first",
     "subdoc invalid-input"},
    {Status::kSubdocXattrUnknownVattrMacro, "SubdocXattrUnknownVattrMacro",
     "unknown virtual xattr macro", "subdoc invalid-input"},
    {Status::kSubdocCanOnlyReviveDeletedDocuments, "SubdocCanOnlyReviveDeletedDocuments",
     "only a deleted document can be revived", "subdoc item-only"},
}};

constexpr std::array<Status, kStatuses.size()> statusList() {
  std::array<Status, kStatuses.size()> out{};
  for (size_t i = 0; i < kStatuses.size(); ++i) out[i] = kStatuses[i].status;
  return out;
}
constexpr std::array<Status, kStatuses.size()> kStatusList = statusList();

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

std::span<const Status> allStatuses() noexcept { return kStatusList; }

std::optional<Status> statusWithoutXerror(Status status) noexcept {
  switch (status) {
    case Status::kSyncWriteInProgress:
    case Status::kSyncWriteReCommitInProgress:
      return Status::kEtmpfail;
    case Status::kNoAccess:
    case Status::kNoBucket:
    case Status::kDurabilityInvalidLevel:
    case Status::kDurabilityImpossible:
    case Status::kSyncWriteAmbiguous:
      return std::nullopt;
    default:
      return status;
  }
}

std::string_view errorMapAttributes(Status status) noexcept {
  const StatusText* entry = lookup(status);
  return entry ? entry->attributes : "";
}

std::string_view describe(Status status) noexcept {
  const StatusText* entry = lookup(status);
  return entry ? entry->description : "unknown status";
}

}  // namespace syncwrite::server::protocol
