// Sub-document mutations: DICT_ADD, DICT_UPSERT, DELETE, REPLACE, the ARRAY_*
// family, COUNTER, REPLACE_BODY_WITH_XATTR and the whole-document SET and
// DELETE, on the body or on xattrs, one spec or up to kMaxSpecs applied all or
// nothing.
//
// Given the stored document (or none), the library computes the document to
// store; the caller stores it (with its CAS check, durability and expiry),
// then fills the pending macros (macros.h) once it has the new CAS and seqno.
// Xattr specs run first, then body specs, in request order within each.
//
// Outcome: Success (or SubdocSuccessDeleted when the stored result is a
// tombstone), with the new value; or SubdocMultiPathFailure with the index
// and status of the first spec that failed, and nothing to store; or one
// request-level status: validateMutation()'s, KeyEnoent (no document and
// neither Mkdoc nor Add; a tombstone counts as none without AccessDeleted),
// KeyEexists (Add on an existing document),
// SubdocCanOnlyReviveDeletedDocuments, Einval (a compressed value, or an
// xattr section that does not decode when a spec needs the xattrs).
//
// Document flags: Mkdoc and Add create a missing document (the body starts
// as `[]` when the first body spec is an array push or add-unique whose path
// is empty or starts with `[`, as `{}` for any other body spec, and empty
// when there is none) and imply MkdirP on every spec; CreateAsDeleted makes
// the created document a tombstone; ReviveDocument makes a tombstone alive.
// A whole-document DELETE keeps only the system xattrs and makes the result
// a tombstone.
//
// Cost: the body and the xattrs are each parsed at most once and written at
// most once; a part no spec touches is copied as bytes, not parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "subdoc/document.h"
#include "subdoc/macros.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"
#include "subdoc/validate.h"
#include "subdoc/vattr.h"

namespace syncwrite::subdoc {

struct IndexedValue {
  uint8_t index;  // the spec's position in the request
  std::string value;
};

struct MutationOutcome {
  Status status = Status::Success;
  // When status is SubdocMultiPathFailure:
  uint8_t failedIndex = 0;
  Status failedStatus = Status::Success;
  // When status is Success or SubdocSuccessDeleted: what to store.
  std::string value;  // xattr section + body
  uint8_t datatype = 0;
  bool deleted = false;               // store a tombstone
  bool created = false;               // there was no document (or only an inaccessible tombstone)
  std::vector<IndexedValue> results;  // COUNTER's new values
  std::vector<PendingMacro> macros;   // CAS and seqno placeholders in `value`
};

struct MutationContext {
  DocumentMeta meta;  // the stored document's, for ${$document...} macros
  XattrKeyPolicy xattrKeys = XattrKeyPolicy::kAnyKeys;
};

MutationOutcome mutate(const std::optional<Document>& doc, std::span<const MutationSpec> specs,
                       uint8_t docFlags, const MutationContext& context);

// The status a single-path command answers: the failed spec's status, or the
// request's.
Status singleMutationStatus(const MutationOutcome& outcome);

}  // namespace syncwrite::subdoc
