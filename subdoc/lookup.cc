#include "subdoc/lookup.h"

#include "subdoc/json_ops.h"
#include "subdoc/validate.h"
#include "subdoc/xattr_blob.h"
#include "subdoc/xattr_tree.h"

namespace syncwrite::subdoc {
namespace {

// The document's parts, parsed on first use.
class LookupState {
 public:
  LookupState(std::string_view xattrSection, std::string_view body, bool bodyIsJson)
      : xattrSection_(xattrSection), body_(body), bodyIsJson_(bodyIsJson) {}

  std::string_view body() const { return body_; }

  Status bodyTree(const Json*& tree) {
    if (!bodyParsed_) {
      bodyParsed_ = true;
      if (!bodyIsJson_) {
        bodyStatus_ = Status::SubdocDocNotJson;
      } else {
        const auto result = parseJson(body_, bodyJson_);
        bodyStatus_ = result == ParseResult::kOk        ? Status::Success
                      : result == ParseResult::kTooDeep ? Status::SubdocDocE2deep
                                                        : Status::SubdocDocNotJson;
      }
    }
    tree = &bodyJson_;
    return bodyStatus_;
  }

  bool xattrs(const Xattrs*& xattrs, const Json*& tree) {
    if (!xattrsParsed_) {
      xattrsParsed_ = true;
      xattrsOk_ = (xattrSection_.empty() || decodeXattrs(xattrSection_, xattrs_)) &&
                  xattrsToTree(xattrs_, xattrTree_);
    }
    xattrs = &xattrs_;
    tree = &xattrTree_;
    return xattrsOk_;
  }

 private:
  std::string_view xattrSection_;
  std::string_view body_;
  bool bodyIsJson_;
  bool bodyParsed_ = false;
  Status bodyStatus_ = Status::Success;
  Json bodyJson_;
  bool xattrsParsed_ = false;
  bool xattrsOk_ = false;
  Xattrs xattrs_;
  Json xattrTree_;
};

Status lookupVattr(const Path& path, std::string_view key, Opcode opcode, LookupState& state,
                   const LookupContext& context, std::string& out) {
  Json root = Json::object();
  if (key == "$document") {
    root[std::string(key)] = documentVattr(context.meta, state.body());
  } else if (key == "$vbucket") {
    if (!context.vbucket.exists) {
      return Status::NotMyVbucket;
    }
    root[std::string(key)] = vbucketVattr(context.vbucket);
  } else if (key == "$XTOC") {
    const Xattrs* xattrs = nullptr;
    const Json* tree = nullptr;
    if (!state.xattrs(xattrs, tree)) {
      return Status::Einval;
    }
    root[std::string(key)] = xtocVattr(*xattrs, context.systemXattrRead);
  } else {
    return Status::SubdocXattrUnknownVattr;
  }
  return lookupPath(root, path, opcode, out);
}

SpecResult lookupOne(const LookupSpec& spec, LookupState& state, const LookupContext& context) {
  SpecResult result;
  if (spec.opcode == Opcode::WholeGet) {
    if (state.body().empty()) {
      result.status = Status::SubdocPathEnoent;
    } else {
      result.value = std::string(state.body());
    }
    return result;
  }
  Path path;
  if ((spec.flags & path_flag::kXattrPath) != 0) {
    result.status = parseXattrPath(spec.path, path);
    if (result.status != Status::Success) {
      return result;
    }
    const auto& key = path.front().key();
    if (isVirtualXattr(key)) {
      result.status = lookupVattr(path, key, spec.opcode, state, context, result.value);
      return result;
    }
    const Xattrs* xattrs = nullptr;
    const Json* tree = nullptr;
    if (!state.xattrs(xattrs, tree)) {
      result.status = Status::Einval;
      return result;
    }
    result.status = lookupPath(*tree, path, spec.opcode, result.value);
    if (result.status == Status::Success && spec.opcode == Opcode::Get && path.size() == 1) {
      // A whole xattr is answered with its stored bytes, as kv_engine does.
      for (const auto& xattr : *xattrs) {
        if (xattr.key == key) {
          result.value = xattr.value;
        }
      }
    }
    return result;
  }
  result.status = parsePath(spec.path, path);
  if (result.status != Status::Success) {
    return result;
  }
  const Json* tree = nullptr;
  result.status = state.bodyTree(tree);
  if (result.status == Status::Success) {
    result.status = lookupPath(*tree, path, spec.opcode, result.value);
  }
  return result;
}

}  // namespace

LookupOutcome lookup(const std::optional<Document>& doc, std::span<const LookupSpec> specs,
                     uint8_t docFlags, const LookupContext& context) {
  LookupOutcome outcome;
  outcome.status = validateLookup(specs, docFlags);
  if (outcome.status != Status::Success) {
    return outcome;
  }
  if (!doc || (doc->deleted && (docFlags & doc_flag::kAccessDeleted) == 0)) {
    outcome.status = Status::KeyEnoent;
    return outcome;
  }
  SplitValue split;
  if ((doc->datatype & datatype::kSnappy) != 0 || !splitValue(doc->value, doc->datatype, split)) {
    outcome.status = Status::Einval;
    return outcome;
  }
  LookupState state(split.xattrs, split.body, (doc->datatype & datatype::kJson) != 0);
  bool failed = false;
  outcome.results.reserve(specs.size());
  for (const auto& spec : specs) {
    outcome.results.push_back(lookupOne(spec, state, context));
    failed = failed || outcome.results.back().status != Status::Success;
  }
  if (doc->deleted) {
    outcome.status = failed ? Status::SubdocMultiPathFailureDeleted : Status::SubdocSuccessDeleted;
  } else {
    outcome.status = failed ? Status::SubdocMultiPathFailure : Status::Success;
  }
  return outcome;
}

Status singleLookupStatus(const LookupOutcome& outcome) {
  if (outcome.results.size() != 1) {
    return outcome.status;
  }
  const Status spec = outcome.results.front().status;
  if (spec == Status::Success && outcome.status == Status::SubdocSuccessDeleted) {
    return Status::SubdocSuccessDeleted;
  }
  return spec;
}

}  // namespace syncwrite::subdoc
