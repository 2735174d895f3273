#include "subdoc/mutation.h"

#include <algorithm>
#include <array>

#include "subdoc/crc32c.h"
#include "subdoc/json_ops.h"
#include "subdoc/path.h"
#include "subdoc/xattr_blob.h"
#include "subdoc/xattr_tree.h"

namespace syncwrite::subdoc {
namespace {

bool isArrayRootSpec(const MutationSpec& spec) {
  const bool arrayOp = spec.opcode == Opcode::ArrayPushFirst ||
                       spec.opcode == Opcode::ArrayPushLast ||
                       spec.opcode == Opcode::ArrayAddUnique;
  return arrayOp && (spec.path.empty() || spec.path.front() == '[');
}

// The body as it evolves: text, or a parsed tree once a path spec touched it.
struct Body {
  std::string text;
  std::optional<Json> tree;
  bool isJson = false;
  bool modified = false;

  Status parsed(Json*& out) {
    if (!tree) {
      if (!isJson) {
        return Status::SubdocDocNotJson;
      }
      Json parsedTree;
      const auto result = parseJson(text, parsedTree);
      if (result != ParseResult::kOk) {
        return result == ParseResult::kTooDeep ? Status::SubdocDocE2deep : Status::SubdocDocNotJson;
      }
      tree = std::move(parsedTree);
    }
    out = &*tree;
    return Status::Success;
  }

  std::string finalText() const { return tree ? dumpJson(*tree) : text; }
};

class Mutator {
 public:
  Mutator(const MutationContext& context, std::string_view originalBody)
      : context_(context), originalBody_(originalBody) {}

  // Replaces a macro value by what it expands to now: a placeholder for the
  // Mutation macros, the stored document's metadata for ${$document...}.
  Status expand(std::string_view value, const std::vector<std::string_view>& haystacks,
                std::string& out) {
    constexpr std::array<std::pair<std::string_view, MacroKind>, 3> kMutationMacros{{
        {macro::kCas, MacroKind::kCas},
        {macro::kSeqno, MacroKind::kSeqno},
        {macro::kValueCrc32c, MacroKind::kValueCrc32c},
    }};
    for (const auto& [name, kind] : kMutationMacros) {
      if (value == name) {
        out = placeholderFor(kind, haystacks);
        return Status::Success;
      }
    }
    return expandDocumentMacro(value, out);
  }

  std::vector<PendingMacro>& pending() { return pending_; }

 private:
  std::string placeholderFor(MacroKind kind, const std::vector<std::string_view>& haystacks) {
    for (const auto& macro : pending_) {
      if (macro.kind == kind) {
        return macro.placeholder;
      }
    }
    std::vector<std::string_view> all = haystacks;
    for (const auto& macro : pending_) {
      all.push_back(macro.placeholder);
    }
    pending_.push_back({kind, makePlaceholder(kind, all, pending_.size() + 1)});
    return pending_.back().placeholder;
  }

  Status expandDocumentMacro(std::string_view value, std::string& out) const {
    constexpr std::string_view kPrefix = R"("${$document)";
    constexpr std::string_view kSuffix = R"(}")";
    std::string_view field =
        value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
    const Json doc = documentVattr(context_.meta, originalBody_);
    if (field.empty()) {
      out = dumpJson(doc);
      return Status::Success;
    }
    if (!field.starts_with('.')) {
      return Status::SubdocXattrUnknownVattrMacro;
    }
    field.remove_prefix(1);
    if (field == "last_modified" && context_.meta.casIsHlc) {
      out = std::to_string(context_.meta.cas / 1'000'000'000);  // a number here, as kv_engine
      return Status::Success;
    }
    if (field == "value_crc32c" || field == "last_modified" || !doc.contains(field)) {
      return Status::SubdocXattrUnknownVattrMacro;
    }
    out = dumpJson(doc[std::string(field)]);
    return Status::Success;
  }

  const MutationContext& context_;
  std::string_view originalBody_;
  std::vector<PendingMacro> pending_;
};

MutationOutcome requestStatus(Status status) {
  MutationOutcome outcome;
  outcome.status = status;
  return outcome;
}

MutationOutcome specFailure(std::size_t index, Status status) {
  MutationOutcome outcome;
  outcome.status = Status::SubdocMultiPathFailure;
  outcome.failedIndex = static_cast<uint8_t>(index);
  outcome.failedStatus = status;
  return outcome;
}

}  // namespace

MutationOutcome mutate(const std::optional<Document>& doc, std::span<const MutationSpec> specs,
                       uint8_t docFlags, const MutationContext& context) {
  using namespace doc_flag;  // NOLINT(google-build-using-namespace)
  if (auto status = validateMutation(specs, docFlags, context.xattrKeys);
      status != Status::Success) {
    return requestStatus(status);
  }
  const bool accessible = doc && (!doc->deleted || (docFlags & kAccessDeleted) != 0);
  const bool creates = (docFlags & (kMkdoc | kAdd)) != 0;
  if (!accessible && !creates) {
    return requestStatus(Status::KeyEnoent);
  }
  if (accessible && (docFlags & kAdd) != 0) {
    return requestStatus(Status::KeyEexists);
  }
  if ((docFlags & kReviveDocument) != 0 && accessible && !doc->deleted) {
    return requestStatus(Status::SubdocCanOnlyReviveDeletedDocuments);
  }

  // The starting point: the stored document, or the template of a new one.
  SplitValue split;
  Body body;
  bool deleted = false;
  if (accessible) {
    if ((doc->datatype & datatype::kSnappy) != 0 || !splitValue(doc->value, doc->datatype, split)) {
      return requestStatus(Status::Einval);
    }
    body.text = std::string(split.body);
    body.isJson = (doc->datatype & datatype::kJson) != 0;
    deleted = doc->deleted && (docFlags & kReviveDocument) == 0;
  } else {
    for (const auto& spec : specs) {
      if ((spec.flags & path_flag::kXattrPath) == 0 && !traitsOf(spec.opcode)->wholeDoc) {
        body.text = isArrayRootSpec(spec) ? "[]" : "{}";
        body.isJson = true;
        break;
      }
    }
    deleted = (docFlags & kCreateAsDeleted) != 0;
  }

  // The xattrs are decoded only when a spec reads or changes them; otherwise
  // the section is carried over as bytes.
  const bool touchesXattrs = std::any_of(specs.begin(), specs.end(), [](const auto& spec) {
    return (spec.flags & path_flag::kXattrPath) != 0 || spec.opcode == Opcode::WholeDelete;
  });
  Xattrs xattrs;
  Json xattrTree = Json::object();
  if (touchesXattrs && ((!split.xattrs.empty() && !decodeXattrs(split.xattrs, xattrs)) ||
                        !xattrsToTree(xattrs, xattrTree))) {
    return requestStatus(Status::Einval);
  }
  const Json originalXattrTree = touchesXattrs ? xattrTree : Json::object();
  bool xattrsModified = false;

  Mutator mutator(context, split.body);
  MutationOutcome outcome;
  const bool impliedMkdirP = creates;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& spec = specs[i];
    const bool mkdirP = impliedMkdirP || (spec.flags & path_flag::kMkdirP) != 0;
    std::string result;
    Status status = Status::Success;
    if ((spec.flags & path_flag::kXattrPath) != 0) {
      Path path;
      status = parseXattrPath(spec.path, path);
      std::string value = spec.value;
      if (status == Status::Success && (spec.flags & path_flag::kExpandMacros) != 0) {
        std::vector<std::string_view> haystacks{split.xattrs};
        for (const auto& other : specs) {
          haystacks.push_back(other.value);
        }
        status = mutator.expand(spec.value, haystacks, value);
      }
      if (status == Status::Success && spec.opcode == Opcode::ReplaceBodyWithXattr) {
        // The body becomes the xattr value as it is at this point of the request.
        const Json& tree = xattrTree;
        status = lookupPath(tree, path, Opcode::Get, result);
        if (status == Status::Success) {
          body.text = std::move(result);
          body.tree.reset();
          body.isJson = true;
          body.modified = true;
          result.clear();
        }
      } else if (status == Status::Success) {
        status = mutatePath(xattrTree, path, spec.opcode, value, mkdirP, result);
        xattrsModified = xattrsModified || status == Status::Success;
      }
    } else if (spec.opcode == Opcode::WholeSet) {
      Json ignored;
      body.text = spec.value;
      body.tree.reset();
      body.isJson = parseJson(spec.value, ignored) == ParseResult::kOk;
      body.modified = true;
    } else if (spec.opcode == Opcode::WholeDelete) {
      body.text.clear();
      body.tree.reset();
      body.isJson = false;
      body.modified = true;
      deleted = true;
      Json system = Json::object();
      for (const auto& [key, value] : xattrTree.items()) {
        if (isSystemXattr(key)) {
          system[key] = value;
        }
      }
      xattrTree = std::move(system);
      xattrsModified = true;
    } else {
      Path path;
      Json* tree = nullptr;
      status = parsePath(spec.path, path);
      if (status == Status::Success) {
        status = body.parsed(tree);
      }
      if (status == Status::Success) {
        status = mutatePath(*tree, path, spec.opcode, spec.value, mkdirP, result);
      }
      body.modified = body.modified || status == Status::Success;
    }
    if (status != Status::Success) {
      return specFailure(i, status);
    }
    if (spec.opcode == Opcode::Counter) {
      outcome.results.push_back({static_cast<uint8_t>(i), std::move(result)});
    }
  }

  // Compose the value to store.
  const std::string bodyText = body.modified ? body.finalText() : std::string(split.body);
  std::string section = xattrsModified
                            ? encodeXattrs(treeToXattrs(xattrTree, originalXattrTree, xattrs))
                            : std::string(split.xattrs);
  for (const auto& macro : mutator.pending()) {
    if (macro.kind == MacroKind::kValueCrc32c) {
      overwriteAll(section, macro.placeholder, expandMacro(macro.kind, crc32c(bodyText)));
    } else if (section.find(macro.placeholder) != std::string::npos) {
      outcome.macros.push_back(macro);
    }
  }
  outcome.datatype = 0;
  if (!section.empty()) {
    outcome.datatype |= datatype::kXattr;
  }
  if (!bodyText.empty() && body.isJson) {
    outcome.datatype |= datatype::kJson;
  }
  outcome.value = std::move(section);
  outcome.value += bodyText;
  outcome.deleted = deleted;
  outcome.created = !accessible;
  // A mutation whose result stays a tombstone answers SuccessDeleted; a
  // whole-document DELETE answers Success.
  outcome.status = deleted && specs.back().opcode != Opcode::WholeDelete
                       ? Status::SubdocSuccessDeleted
                       : Status::Success;
  return outcome;
}

Status singleMutationStatus(const MutationOutcome& outcome) {
  return outcome.status == Status::SubdocMultiPathFailure ? outcome.failedStatus : outcome.status;
}

}  // namespace syncwrite::subdoc
