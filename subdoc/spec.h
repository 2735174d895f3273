// The vocabulary of a sub-document request: opcodes, path and document flags,
// the datatype bits of a stored value, the specs a request carries, and the
// limits. Numbers are kv_engine's wire values (couchbase/kv_engine,
// docs/SubDocument.md and include/mcbp/protocol/), so a server passes the
// bytes it decodes straight through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace syncwrite::subdoc {

// The opcodes a spec may name. A single-path command's opcode is its own spec;
// inside a multi-path request the whole-document forms use the plain
// key-value opcodes with an empty path.
enum class Opcode : uint8_t {
  WholeGet = 0x00,     // multi-lookup: the whole body
  WholeSet = 0x01,     // multi-mutation: replace the whole body
  WholeDelete = 0x04,  // multi-mutation: delete the document (system xattrs stay)
  Get = 0xc5,
  Exists = 0xc6,
  DictAdd = 0xc7,
  DictUpsert = 0xc8,
  Delete = 0xc9,
  Replace = 0xca,
  ArrayPushLast = 0xcb,
  ArrayPushFirst = 0xcc,
  ArrayInsert = 0xcd,
  ArrayAddUnique = 0xce,
  Counter = 0xcf,
  GetCount = 0xd2,
  ReplaceBodyWithXattr = 0xd3,  // the body becomes the value of an xattr path
};

// Path flags (one per spec).
namespace path_flag {
inline constexpr uint8_t kMkdirP = 0x01;        // create missing intermediate objects
inline constexpr uint8_t kXattrPath = 0x04;     // the path names an extended attribute
inline constexpr uint8_t kExpandMacros = 0x10;  // the value is a macro; requires kXattrPath
}  // namespace path_flag

// Document flags (one per request).
namespace doc_flag {
inline constexpr uint8_t kMkdoc = 0x01;            // create the document if missing (set semantics)
inline constexpr uint8_t kAdd = 0x02;              // create it only if missing (add semantics)
inline constexpr uint8_t kAccessDeleted = 0x04;    // operate on a deleted document's xattrs
inline constexpr uint8_t kCreateAsDeleted = 0x08;  // a created document is a tombstone
inline constexpr uint8_t kReviveDocument = 0x10;   // a deleted document becomes alive
}  // namespace doc_flag

// Datatype bits of a stored value (kv_engine's PROTOCOL_BINARY_DATATYPE_*).
namespace datatype {
inline constexpr uint8_t kJson = 0x01;
inline constexpr uint8_t kSnappy = 0x02;
inline constexpr uint8_t kXattr = 0x04;
}  // namespace datatype

// Limits, as kv_engine's (docs/SubDocument.md, "Limits"). subjson counts the
// document root as a path component: 32 components with the root leave 31 for
// the caller, and a value may sit at most 32 levels deep (the root is level 1,
// each element or member one more than its container, scalars included).
inline constexpr std::size_t kMaxPathComponents = 31;
inline constexpr std::size_t kMaxDepth = 32;
inline constexpr std::size_t kMaxPathLength = 1024;
inline constexpr std::size_t kMaxSpecs = 16;
// An xattr key is at most 15 bytes (kv_engine: SUBDOC_MAX_XATTR_LENGTH 16,
// exclusive).
inline constexpr std::size_t kMaxXattrKeyLength = 15;
// System xattrs of one document take at most this many bytes in the blob,
// their length fields included (kv_engine: cb::limits::PrivilegedBytes).
inline constexpr std::size_t kMaxSystemXattrBytes = std::size_t{1024} * 1024;

struct LookupSpec {
  Opcode opcode = Opcode::Get;
  uint8_t flags = 0;  // path_flag::
  std::string path;
};

struct MutationSpec {
  Opcode opcode = Opcode::DictUpsert;
  uint8_t flags = 0;  // path_flag::
  std::string path;
  std::string value;  // JSON text; COUNTER's delta; empty for DELETE
};

// What an opcode permits; nullptr for an opcode this library does not run.
struct OpcodeTraits {
  bool mutator;
  bool wholeDoc;
  bool needsValue;
  bool emptyPathAllowed;
  uint8_t validPathFlags;
  uint8_t validDocFlags;
  uint8_t requiredPathFlags = 0;
};
const OpcodeTraits* traitsOf(Opcode opcode);

}  // namespace syncwrite::subdoc
