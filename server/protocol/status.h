// Response statuses of the MCBP subset syncwrite speaks. syncwrite-server
// never answers Enomem or Busy; they are here for the client, which may read
// them from another server. It answers Etmpfail for a write refused
// at the bucket's memory quota and for a read-modify-write that kept racing.
//
// Values and meanings from couchbase/kv_engine docs/BinaryProtocol.md
// ("Response Status"). The names follow that table; kv_engine's own enum
// spells some of them KeyEnoent, KeyEexists, E2big and Etmpfail. A Status may
// hold any 16-bit value (a client reads whatever the server sent).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace syncwrite::server::protocol {

enum class Status : uint16_t {
  kSuccess = 0x00,
  kKeyNotFound = 0x01,   // an absent key; also an unknown bucket, STAT group or error map version
  kKeyExists = 0x02,     // ADD of a present key
  kTooBig = 0x03,        // body over max_packet_size (E2big); the connection is closed
  kEinval = 0x04,        // malformed request, or a refused SET_PARAM
  kNotStored = 0x05,     // APPEND/PREPEND of an absent key
  kDeltaBadval = 0x06,   // INCREMENT/DECREMENT of a value that is not a number
  kNotMyVbucket = 0x07,  // the vbucket does not exist or is not active
  kNoBucket = 0x08,      // a data command before SELECT_BUCKET
  kAuthError = 0x20,     // SASL: wrong credentials or a malformed exchange
  kAuthContinue = 0x21,  // SASL: send the next step (SASL_STEP)
  kRollback = 0x23,      // DCP_STREAM_REQ: roll back to the 8-byte seqno in the value
  kNoAccess = 0x24,      // not authenticated yet
  kUnknownCommand = 0x81,
  kEnomem = 0x82,
  kNotSupported = 0x83,  // TOUCH/GAT under durability_min_level; FLUSH disabled
  kInternalError = 0x84,
  kBusy = 0x85,
  kEtmpfail = 0x86,
  kXattrEinval = 0x87,                  // an xattr key that breaks kv_engine's key rules
  kDurabilityInvalidLevel = 0xa0,       // the level byte names no level
  kDurabilityImpossible = 0xa1,         // the topology cannot satisfy the level
  kSyncWriteInProgress = 0xa2,          // another SyncWrite on the key is in flight
  kSyncWriteAmbiguous = 0xa3,           // timeout, vbucket left active, bucket deleted, shutdown
  kSyncWriteReCommitInProgress = 0xa4,  // a promoted replica's prepare awaits its new majority
  // Sub-document statuses (kv_engine include/mcbp/protocol/status.h); the
  // meanings are subdoc/status.h's, whose numbers these are.
  kSubdocPathEnoent = 0xc0,
  kSubdocPathMismatch = 0xc1,
  kSubdocPathEinval = 0xc2,
  kSubdocPathE2big = 0xc3,
  kSubdocDocE2deep = 0xc4,
  kSubdocValueCantinsert = 0xc5,
  kSubdocDocNotJson = 0xc6,
  kSubdocNumErange = 0xc7,
  kSubdocDeltaEinval = 0xc8,
  kSubdocPathEexists = 0xc9,
  kSubdocValueEtoodeep = 0xca,
  kSubdocInvalidCombo = 0xcb,
  kSubdocMultiPathFailure = 0xcc,  // the body says which spec failed
  kSubdocSuccessDeleted = 0xcd,
  kSubdocXattrInvalidFlagCombo = 0xce,
  kSubdocXattrInvalidKeyCombo = 0xcf,
  kSubdocXattrUnknownMacro = 0xd0,
  kSubdocXattrUnknownVattr = 0xd1,
  kSubdocXattrCantModifyVattr = 0xd2,
  kSubdocMultiPathFailureDeleted = 0xd3,
  kSubdocInvalidXattrOrder = 0xd4,
  kSubdocXattrUnknownVattrMacro = 0xd5,
  kSubdocCanOnlyReviveDeletedDocuments = 0xd6,
};

// The kv_engine-style name: "SyncWriteAmbiguous", or "Unknown" for a value
// not in the enum.
std::string_view toString(Status status) noexcept;

// A short description for people: "sync write ambiguous", "not my vbucket";
// "unknown status" for a value not in the enum.
std::string_view describe(Status status) noexcept;

// kv_engine's error-map attributes of `status` ("item-only", "temp",
// "retry-later", ...; docs/ErrorMap.md), space-separated; empty for a value
// not in the enum.
std::string_view errorMapAttributes(Status status) noexcept;

// Every status in the enum, in ascending order (the error map lists them).
std::span<const Status> allStatuses() noexcept;

// What a client that did not negotiate XERROR is told instead of `status`,
// as kv_engine's Connection::remapErrorCode (daemon/connection.cc) decides:
// SyncWriteInProgress and SyncWriteReCommitInProgress become Etmpfail (such
// a client retries it); NoAccess, NoBucket, DurabilityInvalidLevel,
// DurabilityImpossible and SyncWriteAmbiguous are nullopt — close the
// connection without answering; every other status is kept. (kv_engine also
// maps Locked to KeyExists and NotLocked to Etmpfail; syncwrite has no
// locking yet.) Statuses no engine call returns — SASL's AuthError and
// AuthContinue, UnknownCommand — are kept, as kv_engine sends them as they
// are. The sub-document statuses are kept too: kv_engine's subdoc executor
// answers them as MCBP statuses, which that remap (of engine error codes)
// never sees.
std::optional<Status> statusWithoutXerror(Status status) noexcept;

}  // namespace syncwrite::server::protocol
