// The extended-attribute section of a stored value, in kv_engine's layout
// (couchbase/kv_engine docs/Document.md, "XAttr - extended attributes"):
//
//   uint32 big-endian  N, the length of the pairs that follow (not itself)
//   N bytes            pairs: uint32 big-endian L, then L bytes "key\0value\0"
//   the rest           the document body
//
// A value carries the section exactly when its datatype has datatype::kXattr.
// Keys follow kv_engine's rules (docs/ExtendedAttributes.md): 1-15 bytes of
// UTF-8, no NUL, `.` or `[`, not starting with punctuation or a control
// character except `_` (a system xattr, kept in a tombstone) and `$` (a
// virtual one, never stored); `_` or `$` alone is not a key. Values are JSON.
//
// Decoding checks everything kv_engine's validator does (lengths inside the
// blob, each pair's length matching its key and value, key rules, JSON
// values, no duplicate key, system xattrs within kMaxSystemXattrBytes), so a
// malformed blob is an error value, never a read past the end.
// Cost: O(blob); decode copies keys and values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace syncwrite::subdoc {

struct Xattr {
  std::string key;
  std::string value;  // JSON text
};
using Xattrs = std::vector<Xattr>;  // blob order

bool isValidXattrKey(std::string_view key);
inline bool isSystemXattr(std::string_view key) { return !key.empty() && key.front() == '_'; }
inline bool isVirtualXattr(std::string_view key) { return !key.empty() && key.front() == '$'; }

// Decodes a whole section (length prefix included, nothing after it).
// Returns false, leaving `out` unspecified, on any malformed input.
bool decodeXattrs(std::string_view section, Xattrs& out);

// Encodes `xattrs` as a section; no xattrs encode as the empty string (a
// value without the section, datatype without kXattr).
// Requires: keys valid and distinct, values JSON without NUL.
std::string encodeXattrs(const Xattrs& xattrs);

// A value split into its xattr section (empty when datatype lacks kXattr)
// and its body. Views into the value.
struct SplitValue {
  std::string_view xattrs;
  std::string_view body;
};
// Returns false when datatype has kXattr and the length prefix is missing or
// runs past the value. Only the prefix is checked; decodeXattrs checks pairs.
bool splitValue(std::string_view value, uint8_t datatype, SplitValue& out);

// The value a plain GET returns (body only) and its datatype (kXattr cleared).
// Returns false as splitValue does.
bool stripXattrs(std::string_view value, uint8_t datatype, std::string_view& body,
                 uint8_t& bodyDatatype);

// The system xattrs of `xattrs` only: what a deletion keeps in the tombstone.
Xattrs systemXattrsOf(const Xattrs& xattrs);

}  // namespace syncwrite::subdoc
