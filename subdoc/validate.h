// The checks kv_engine makes on a sub-document request before it reads the
// document (daemon/subdocument_validators.cc), answering the request as a
// whole: a spec count outside 1..kMaxSpecs or a lookup opcode in a mutation
// (or the reverse) is SubdocInvalidCombo; flags an opcode does not take, a
// path longer than kMaxPathLength, a missing path, value or an unexpected
// one are Einval; Add with Mkdoc is Einval; an xattr spec after a body spec
// is SubdocInvalidXattrOrder; anything after a whole-document DELETE is
// SubdocInvalidCombo; ExpandMacros without XattrPath is
// SubdocXattrInvalidFlagCombo; a bad xattr key is XattrEinval; a mutation
// of a virtual xattr is SubdocXattrCantModifyVattr; an unknown macro is
// SubdocXattrUnknownMacro.
//
// kv_engine before 7.6 (MB-57864) allowed one xattr key per request and
// answered SubdocXattrInvalidKeyCombo for a second; 7.6 and later allow any
// number. XattrKeyPolicy chooses; the default is the current behaviour.
#pragma once

#include <cstdint>
#include <span>

#include "subdoc/spec.h"
#include "subdoc/status.h"

namespace syncwrite::subdoc {

enum class XattrKeyPolicy : uint8_t { kAnyKeys, kOneKey };

Status validateLookup(std::span<const LookupSpec> specs, uint8_t docFlags);
Status validateMutation(std::span<const MutationSpec> specs, uint8_t docFlags,
                        XattrKeyPolicy policy = XattrKeyPolicy::kAnyKeys);

}  // namespace syncwrite::subdoc
