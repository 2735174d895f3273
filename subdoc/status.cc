#include "subdoc/status.h"

namespace syncwrite::subdoc {

std::string_view toString(Status status) {
  switch (status) {
    case Status::Success:
      return "Success";
    case Status::KeyEnoent:
      return "KeyEnoent";
    case Status::KeyEexists:
      return "KeyEexists";
    case Status::Einval:
      return "Einval";
    case Status::NotMyVbucket:
      return "NotMyVbucket";
    case Status::XattrEinval:
      return "XattrEinval";
    case Status::SubdocPathEnoent:
      return "SubdocPathEnoent";
    case Status::SubdocPathMismatch:
      return "SubdocPathMismatch";
    case Status::SubdocPathEinval:
      return "SubdocPathEinval";
    case Status::SubdocPathE2big:
      return "SubdocPathE2big";
    case Status::SubdocDocE2deep:
      return "SubdocDocE2deep";
    case Status::SubdocValueCantinsert:
      return "SubdocValueCantinsert";
    case Status::SubdocDocNotJson:
      return "SubdocDocNotJson";
    case Status::SubdocNumErange:
      return "SubdocNumErange";
    case Status::SubdocDeltaEinval:
      return "SubdocDeltaEinval";
    case Status::SubdocPathEexists:
      return "SubdocPathEexists";
    case Status::SubdocValueEtoodeep:
      return "SubdocValueEtoodeep";
    case Status::SubdocInvalidCombo:
      return "SubdocInvalidCombo";
    case Status::SubdocMultiPathFailure:
      return "SubdocMultiPathFailure";
    case Status::SubdocSuccessDeleted:
      return "SubdocSuccessDeleted";
    case Status::SubdocXattrInvalidFlagCombo:
      return "SubdocXattrInvalidFlagCombo";
    case Status::SubdocXattrInvalidKeyCombo:
      return "SubdocXattrInvalidKeyCombo";
    case Status::SubdocXattrUnknownMacro:
      return "SubdocXattrUnknownMacro";
    case Status::SubdocXattrUnknownVattr:
      return "SubdocXattrUnknownVattr";
    case Status::SubdocXattrCantModifyVattr:
      return "SubdocXattrCantModifyVattr";
    case Status::SubdocMultiPathFailureDeleted:
      return "SubdocMultiPathFailureDeleted";
    case Status::SubdocInvalidXattrOrder:
      return "SubdocInvalidXattrOrder";
    case Status::SubdocXattrUnknownVattrMacro:
      return "SubdocXattrUnknownVattrMacro";
    case Status::SubdocCanOnlyReviveDeletedDocuments:
      return "SubdocCanOnlyReviveDeletedDocuments";
  }
  return "Unknown";
}

}  // namespace syncwrite::subdoc
