#include "subdoc/xattr_tree.h"

namespace syncwrite::subdoc {

bool xattrsToTree(const Xattrs& xattrs, Json& tree) {
  tree = Json::object();
  for (const auto& xattr : xattrs) {
    Json value;
    if (parseJson(xattr.value, value) != ParseResult::kOk) {
      return false;
    }
    tree[xattr.key] = std::move(value);
  }
  return true;
}

Xattrs treeToXattrs(const Json& tree, const Json& originalTree, const Xattrs& original) {
  Xattrs out;
  out.reserve(tree.size());
  for (const auto& [key, value] : tree.items()) {
    std::string text;
    const auto before = originalTree.find(key);
    if (before != originalTree.end() && *before == value) {
      for (const auto& xattr : original) {
        if (xattr.key == key) {
          text = xattr.value;
          break;
        }
      }
    }
    if (text.empty()) {
      text = dumpJson(value);
    }
    out.push_back({key, std::move(text)});
  }
  return out;
}

Status parseXattrPath(std::string_view text, Path& out) {
  const auto parts = splitXattrPath(text);
  if (!isValidXattrKey(parts.key)) {
    return Status::XattrEinval;
  }
  std::string_view rest = parts.rest;
  if (rest.starts_with('.')) {
    rest.remove_prefix(1);
    if (rest.empty()) {
      return Status::SubdocPathEinval;
    }
  }
  if (const auto status = parsePath(rest, out, 1); status != Status::Success) {
    return status;
  }
  out.insert(out.begin(), PathComponent::member(std::string(parts.key)));
  return Status::Success;
}

}  // namespace syncwrite::subdoc
