// A document's xattrs as one JSON object keyed by xattr name, so an xattr
// spec runs as a body operation whose first path component is the key (as
// kv_engine runs its xattr phase). Converting back keeps the bytes of every
// xattr whose value did not change.
#pragma once

#include <string_view>

#include "subdoc/json_value.h"
#include "subdoc/path.h"
#include "subdoc/status.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {

// Requires: every value is JSON (decodeXattrs checked it). Returns false
// otherwise.
bool xattrsToTree(const Xattrs& xattrs, Json& tree);

// The xattrs `tree` holds, in its order. A value equal to its value in
// `originalTree` (xattrsToTree of `original`) keeps its text from `original`.
Xattrs treeToXattrs(const Json& tree, const Json& originalTree, const Xattrs& original);

// Parses an xattr spec's path ("key", "key.a[0]", "key[1]") into a tree path.
// Returns XattrEinval for a bad key, or parsePath's statuses for the rest.
Status parseXattrPath(std::string_view text, Path& out);

}  // namespace syncwrite::subdoc
