// Status: the outcome of a sub-document operation, as a number a server
// answers on the wire unchanged.
//
// The values are kv_engine's MCBP response statuses (couchbase/kv_engine,
// include/mcbp/protocol/status.h): the general ones a sub-document request can
// end with, and the sub-document family 0xc0-0xd6. This library defines its
// own enum because it must not include server/ (whose protocol/status.h has
// none of the sub-document statuses yet: the server's wiring adds them with
// these numbers). tests/subdoc_path_test.cc pins every value.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncwrite::subdoc {

enum class Status : uint16_t {
  Success = 0x00,
  KeyEnoent = 0x01,     // no document (or a deleted one without AccessDeleted)
  KeyEexists = 0x02,    // the Add doc flag on a document that exists
  Einval = 0x04,        // a malformed request (flags, empty path, missing value)
  NotMyVbucket = 0x07,  // $vbucket of a vbucket that does not exist
  XattrEinval = 0x87,   // an xattr key that breaks the key rules
  SubdocPathEnoent = 0xc0,
  SubdocPathMismatch = 0xc1,
  SubdocPathEinval = 0xc2,
  SubdocPathE2big = 0xc3,
  SubdocDocE2deep = 0xc4,
  SubdocValueCantinsert = 0xc5,
  SubdocDocNotJson = 0xc6,
  SubdocNumErange = 0xc7,
  SubdocDeltaEinval = 0xc8,
  SubdocPathEexists = 0xc9,
  SubdocValueEtoodeep = 0xca,
  SubdocInvalidCombo = 0xcb,
  SubdocMultiPathFailure = 0xcc,
  SubdocSuccessDeleted = 0xcd,
  SubdocXattrInvalidFlagCombo = 0xce,
  SubdocXattrInvalidKeyCombo = 0xcf,
  SubdocXattrUnknownMacro = 0xd0,
  SubdocXattrUnknownVattr = 0xd1,
  SubdocXattrCantModifyVattr = 0xd2,
  SubdocMultiPathFailureDeleted = 0xd3,
  SubdocInvalidXattrOrder = 0xd4,
  SubdocXattrUnknownVattrMacro = 0xd5,
  SubdocCanOnlyReviveDeletedDocuments = 0xd6,
};

// kv_engine's name for `status` ("SubdocPathEnoent"), or "Unknown".
std::string_view toString(Status status);

}  // namespace syncwrite::subdoc
