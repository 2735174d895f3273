#include "subdoc/validate.h"

#include <string_view>

#include "subdoc/macros.h"
#include "subdoc/path.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {
namespace {

struct SpecView {
  Opcode opcode;
  uint8_t flags;
  std::string_view path;
  std::string_view value;
};

Status validateDocFlags(uint8_t docFlags) {
  using namespace doc_flag;  // NOLINT(google-build-using-namespace)
  if ((docFlags & kAdd) != 0 && (docFlags & kMkdoc) != 0) {
    return Status::Einval;
  }
  if ((docFlags & kReviveDocument) != 0 &&
      ((docFlags & kAccessDeleted) == 0 || (docFlags & kCreateAsDeleted) != 0)) {
    return Status::Einval;
  }
  if ((docFlags & kCreateAsDeleted) != 0 && (docFlags & (kAdd | kMkdoc)) == 0) {
    return Status::Einval;
  }
  return Status::Success;
}

Status validateXattrSection(const SpecView& spec, bool mutator) {
  const bool xattr = (spec.flags & path_flag::kXattrPath) != 0;
  const bool macros = (spec.flags & path_flag::kExpandMacros) != 0;
  if (!xattr) {
    return macros ? Status::SubdocXattrInvalidFlagCombo : Status::Success;
  }
  const auto key = splitXattrPath(spec.path).key;
  if (!isValidXattrKey(key)) {
    return Status::XattrEinval;
  }
  if (isVirtualXattr(key) && mutator) {
    return Status::SubdocXattrCantModifyVattr;
  }
  return macros ? validateMacro(spec.value) : Status::Success;
}

Status validateSpec(const SpecView& spec, bool mutator, uint8_t docFlags) {
  const OpcodeTraits* traits = traitsOf(spec.opcode);
  if (traits == nullptr || traits->mutator != mutator) {
    return Status::SubdocInvalidCombo;
  }
  if ((spec.flags & ~traits->validPathFlags) != 0 || (docFlags & ~traits->validDocFlags) != 0 ||
      (spec.flags & traits->requiredPathFlags) != traits->requiredPathFlags) {
    return Status::Einval;
  }
  if (spec.path.size() > kMaxPathLength || (traits->wholeDoc && !spec.path.empty())) {
    return Status::Einval;
  }
  if (const auto status = validateXattrSection(spec, mutator); status != Status::Success) {
    return status;
  }
  if (spec.path.empty() && !traits->emptyPathAllowed) {
    return Status::Einval;
  }
  if (traits->needsValue == spec.value.empty()) {
    return Status::Einval;
  }
  return Status::Success;
}

template <typename Spec>
Status validateAll(std::span<const Spec> specs, bool mutator, uint8_t docFlags,
                   XattrKeyPolicy policy) {
  if (specs.empty() || specs.size() > kMaxSpecs) {
    return Status::SubdocInvalidCombo;
  }
  if (const auto status = validateDocFlags(docFlags); status != Status::Success) {
    return status;
  }
  bool xattrsAllowed = true;
  bool afterWholeDelete = false;
  bool sawBodySpec = false;
  std::string_view firstKey;
  for (const auto& spec : specs) {
    SpecView view{spec.opcode, spec.flags, spec.path, {}};
    if constexpr (requires { spec.value; }) {
      view.value = spec.value;
    }
    if (afterWholeDelete) {
      return Status::SubdocInvalidCombo;
    }
    if (const auto status = validateSpec(view, mutator, docFlags); status != Status::Success) {
      return status;
    }
    const bool xattr = (spec.flags & path_flag::kXattrPath) != 0;
    if (xattr && !xattrsAllowed) {
      return Status::SubdocInvalidXattrOrder;
    }
    xattrsAllowed = xattrsAllowed && xattr;
    if (xattr && policy == XattrKeyPolicy::kOneKey) {
      const auto key = splitXattrPath(spec.path).key;
      if (!firstKey.empty() && key != firstKey) {
        return Status::SubdocXattrInvalidKeyCombo;
      }
      firstKey = key;
    }
    if (spec.opcode == Opcode::WholeDelete) {
      if (sawBodySpec) {
        return Status::SubdocInvalidCombo;  // a deletion is the only body spec
      }
      afterWholeDelete = true;
    }
    sawBodySpec = sawBodySpec || !xattr;
    if ((docFlags & doc_flag::kCreateAsDeleted) != 0 && mutator && !xattr &&
        spec.opcode != Opcode::WholeDelete) {
      return Status::Einval;  // a document created deleted has no body to change
    }
  }
  return Status::Success;
}

}  // namespace

Status validateLookup(std::span<const LookupSpec> specs, uint8_t docFlags) {
  return validateAll(specs, false, docFlags, XattrKeyPolicy::kAnyKeys);
}

Status validateMutation(std::span<const MutationSpec> specs, uint8_t docFlags,
                        XattrKeyPolicy policy) {
  return validateAll(specs, true, docFlags, policy);
}

}  // namespace syncwrite::subdoc
