// Sub-document lookups: GET, EXISTS, GET_COUNT and the whole-document GET,
// on the body or on xattrs (virtual ones included), one spec or up to
// kMaxSpecs in one request, all reading the same version of the document.
//
// Each spec gets its own status; the request's status is Success when all
// succeeded, SubdocMultiPathFailure when any failed (the others still carry
// their values), with the ...Deleted forms when the document is a tombstone
// read under doc_flag::kAccessDeleted. A request that cannot run at all gets
// a single status and no per-spec results: validateLookup()'s statuses,
// KeyEnoent (no document, or a tombstone without kAccessDeleted), Einval (a
// compressed value, or an xattr section that does not decode).
//
// A single-path command is a request of one spec; its answer is
// singleLookupStatus() and the spec's value.
// Cost: the body and the xattrs are each parsed at most once per request.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "subdoc/document.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"
#include "subdoc/vattr.h"

namespace syncwrite::subdoc {

struct SpecResult {
  Status status = Status::Success;
  std::string value;  // GET's JSON, GET_COUNT's count, the whole body
};

struct LookupOutcome {
  Status status = Status::Success;
  std::vector<SpecResult> results;  // one per spec, or empty
};

struct LookupContext {
  DocumentMeta meta;            // for $document
  VbucketMeta vbucket;          // for $vbucket
  bool systemXattrRead = true;  // $XTOC lists system xattrs
};

LookupOutcome lookup(const std::optional<Document>& doc, std::span<const LookupSpec> specs,
                     uint8_t docFlags, const LookupContext& context);

// The status a single-path command answers: the spec's own status (or
// SubdocSuccessDeleted), or the request's when it did not run.
Status singleLookupStatus(const LookupOutcome& outcome);

}  // namespace syncwrite::subdoc
