#include "subdoc/spec.h"

namespace syncwrite::subdoc {
namespace {

using namespace path_flag;  // NOLINT(google-build-using-namespace)
using namespace doc_flag;   // NOLINT(google-build-using-namespace)

// Valid flags per opcode, as kv_engine's daemon/subdocument_traits.h.
constexpr uint8_t kLookupDoc = kAccessDeleted | kReviveDocument;
constexpr uint8_t kCreateDoc = kMkdoc | kAdd | kAccessDeleted | kReviveDocument | kCreateAsDeleted;

constexpr OpcodeTraits kWholeGet{false, true, false, true, 0, kLookupDoc};
constexpr OpcodeTraits kWholeSet{true, true, true, true, 0, kMkdoc | kAdd};
constexpr OpcodeTraits kWholeDelete{true, true, false, true, 0, kAccessDeleted | kReviveDocument};
constexpr OpcodeTraits kGet{false, false, false, false, kXattrPath, kLookupDoc};
constexpr OpcodeTraits kExists{false, false, false, false, kXattrPath, kLookupDoc};
constexpr OpcodeTraits kGetCount{false, false, false, true, kXattrPath, kLookupDoc};
constexpr OpcodeTraits kDict{true,      false, true, false, kMkdirP | kXattrPath | kExpandMacros,
                             kCreateDoc};
constexpr OpcodeTraits kDelete{true,  false,      false,
                               false, kXattrPath, kAccessDeleted | kReviveDocument};
constexpr OpcodeTraits kReplace{
    true, false, true, false, kXattrPath | kExpandMacros, kAccessDeleted | kReviveDocument | kAdd};
constexpr OpcodeTraits kPush{true,      false, true, true, kMkdirP | kXattrPath | kExpandMacros,
                             kCreateDoc};
constexpr OpcodeTraits kInsert{true,
                               false,
                               true,
                               false,
                               kXattrPath | kExpandMacros,
                               kAccessDeleted | kReviveDocument | kAdd | kCreateAsDeleted};
constexpr OpcodeTraits kAddUnique{true, false, true, true, kMkdirP | kXattrPath, kCreateDoc};
constexpr OpcodeTraits kReplaceBodyWithXattr{
    true, false, false, false, kXattrPath, kAccessDeleted | kReviveDocument, kXattrPath};
constexpr OpcodeTraits kCounter{true, false, true, false, kMkdirP | kXattrPath, kCreateDoc};

}  // namespace

const OpcodeTraits* traitsOf(Opcode opcode) {
  switch (opcode) {
    case Opcode::WholeGet:
      return &kWholeGet;
    case Opcode::WholeSet:
      return &kWholeSet;
    case Opcode::WholeDelete:
      return &kWholeDelete;
    case Opcode::Get:
      return &kGet;
    case Opcode::Exists:
      return &kExists;
    case Opcode::GetCount:
      return &kGetCount;
    case Opcode::DictAdd:
    case Opcode::DictUpsert:
      return &kDict;
    case Opcode::Delete:
      return &kDelete;
    case Opcode::Replace:
      return &kReplace;
    case Opcode::ArrayPushLast:
    case Opcode::ArrayPushFirst:
      return &kPush;
    case Opcode::ArrayInsert:
      return &kInsert;
    case Opcode::ArrayAddUnique:
      return &kAddUnique;
    case Opcode::Counter:
      return &kCounter;
    case Opcode::ReplaceBodyWithXattr:
      return &kReplaceBodyWithXattr;
  }
  return nullptr;
}

}  // namespace syncwrite::subdoc
