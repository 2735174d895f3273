// Path: a parsed sub-document path in kv_engine's syntax (docs/SubDocument.md,
// "Path"): components separated by `.`, array indexes in brackets right after
// a component or at the start (`a.b[0][-1]`, `[2].x`), `[-1]` for the last
// element. Backticks escape the path metacharacters `.`, `[` and `]`
// (`` `a.b`.c `` is two components, a doubled backtick is a literal one); a
// component is in JSON string form, so `"` and control characters must be
// escaped with a backslash, and `\uXXXX` is refused (as subjson does).
//
// An xattr path (path_flag::kXattrPath) starts with the xattr key, which has
// no escaping and ends at the first `.` or `[`; the rest is a body path.
//
// Cost: one pass over the path; a component is copied only when unescaped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "subdoc/status.h"

namespace syncwrite::subdoc {

// A member name (unescaped), or an array index where -1 means the last.
class PathComponent {
 public:
  static PathComponent member(std::string key) { return PathComponent(std::move(key), 0, false); }
  static PathComponent element(int64_t index) { return PathComponent({}, index, true); }

  bool isIndex() const { return isIndex_; }
  const std::string& key() const { return key_; }
  int64_t index() const { return index_; }

 private:
  PathComponent(std::string key, int64_t index, bool isIndex)
      : key_(std::move(key)), index_(index), isIndex_(isIndex) {}

  std::string key_;
  int64_t index_;
  bool isIndex_;
};

using Path = std::vector<PathComponent>;

// Parses `text` into `out`. Empty text is the empty path (the root).
// Returns Success, SubdocPathEinval (syntax), or SubdocPathE2big (longer than
// kMaxPathLength bytes or more than kMaxPathComponents components).
// `extraComponents` counts components already in front of this path (an
// xattr key), so the limit applies to the whole.
Status parsePath(std::string_view text, Path& out, std::size_t extraComponents = 0);

// Splits an xattr path into its key and the body path after it: "_sync.a[1]"
// gives {"_sync", ".a[1]"}. The key is not validated here (xattr_blob.h).
struct XattrPathParts {
  std::string_view key;
  std::string_view rest;
};
XattrPathParts splitXattrPath(std::string_view path);

}  // namespace syncwrite::subdoc
