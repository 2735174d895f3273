// One sub-document operation on a parsed JSON tree, with kv_engine's
// semantics per opcode (docs/SubDocument.md, "Command Listings"): which path
// must exist, what each failure answers, MkdirP creating missing intermediate
// objects (never array elements), and the depth limit.
//
// The tree is the document body, or the object of a document's xattrs keyed
// by xattr name (the xattr key is then the path's first component). The
// caller owns the all-or-nothing of a multi-mutation: a failed mutation may
// leave intermediate objects it created, so the caller discards the tree.
// Cost: a path walk is O(components x members scanned); values are parsed
// once (json_value.h).
#pragma once

#include <string>
#include <string_view>

#include "subdoc/json_value.h"
#include "subdoc/path.h"
#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace syncwrite::subdoc {

// GET (the value's dump() into `out`), EXISTS, GET_COUNT (the member or
// element count as decimal text).
Status lookupPath(const Json& root, const Path& path, Opcode opcode, std::string& out);

// DICT_ADD, DICT_UPSERT, DELETE, REPLACE, the ARRAY_* family and COUNTER.
// `value` is the spec's JSON text (COUNTER: the delta). COUNTER puts the new
// number's text in `out`.
Status mutatePath(Json& root, const Path& path, Opcode opcode, std::string_view value, bool mkdirP,
                  std::string& out);

}  // namespace syncwrite::subdoc
