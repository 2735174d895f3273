// Virtual xattrs: read-only attributes computed from a document's metadata,
// as kv_engine serves them (couchbase/kv_engine daemon/subdocument_context.cc):
//
//   $document  {"CAS","datatype","deleted","exptime","flags","last_modified",
//               "revid","seqno","value_bytes","value_crc32c","vbucket_uuid"}
//   $vbucket   {"HLC":{"mode","now"}}
//   $XTOC      the names of the document's xattrs
//
// Formats follow kv_engine: CAS, seqno and vbucket_uuid as "0x" and 16 hex
// digits, value_crc32c as "0x" and 8, revid and last_modified (CAS
// nanoseconds as seconds, only for an HLC CAS) as decimal strings, exptime,
// flags and value_bytes as numbers, datatype as names ("raw", or some of
// "snappy", "json", "xattr"). Members are in name order, as kv_engine's
// nlohmann::json writes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "subdoc/json_value.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {

// What the caller knows of the stored document, for $document and the
// ${$document...} macros. The library reads nothing else.
struct DocumentMeta {
  uint64_t cas = 0;
  uint64_t vbucketUuid = 0;
  uint64_t seqno = 0;
  uint64_t revid = 0;
  uint32_t exptime = 0;
  uint32_t flags = 0;    // host order
  uint8_t datatype = 0;  // as stored (a compressed document reports snappy)
  bool deleted = false;
  bool casIsHlc = true;  // then last_modified is reported
};

// The vbucket's hybrid logical clock, for $vbucket.
struct VbucketMeta {
  bool exists = true;          // false: $vbucket answers NotMyVbucket
  uint64_t hlcNowSeconds = 0;  // seconds since the Unix epoch
  bool hlcReal = true;         // "real" or "logical"
};

// "0x" and 16 (or 8) lower-case hex digits, as kv_engine's cb::to_hex.
std::string toHex64(uint64_t value);
std::string toHex32(uint32_t value);

// The $document object; `body` is the document's body (no xattrs).
Json documentVattr(const DocumentMeta& meta, std::string_view body);
Json vbucketVattr(const VbucketMeta& meta);
// With `includeSystem` false, system xattrs are left out (the caller lacks
// the privilege to read them).
Json xtocVattr(const Xattrs& xattrs, bool includeSystem);

}  // namespace syncwrite::subdoc
