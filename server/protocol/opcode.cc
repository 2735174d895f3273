#include "server/protocol/opcode.h"

namespace syncwrite::server::protocol {

std::string_view toString(Opcode opcode) noexcept {
  switch (opcode) {
    case Opcode::kGet:
      return "GET";
    case Opcode::kSet:
      return "SET";
    case Opcode::kAdd:
      return "ADD";
    case Opcode::kReplace:
      return "REPLACE";
    case Opcode::kDelete:
      return "DELETE";
    case Opcode::kIncrement:
      return "INCREMENT";
    case Opcode::kDecrement:
      return "DECREMENT";
    case Opcode::kGetQ:
      return "GETQ";
    case Opcode::kGetK:
      return "GETK";
    case Opcode::kGetKQ:
      return "GETKQ";
    case Opcode::kAppend:
      return "APPEND";
    case Opcode::kPrepend:
      return "PREPEND";
    case Opcode::kSetQ:
      return "SETQ";
    case Opcode::kAddQ:
      return "ADDQ";
    case Opcode::kReplaceQ:
      return "REPLACEQ";
    case Opcode::kDeleteQ:
      return "DELETEQ";
    case Opcode::kIncrementQ:
      return "INCREMENTQ";
    case Opcode::kDecrementQ:
      return "DECREMENTQ";
    case Opcode::kQuitQ:
      return "QUITQ";
    case Opcode::kAppendQ:
      return "APPENDQ";
    case Opcode::kPrependQ:
      return "PREPENDQ";
    case Opcode::kQuit:
      return "QUIT";
    case Opcode::kFlush:
      return "FLUSH";
    case Opcode::kFlushQ:
      return "FLUSHQ";
    case Opcode::kNoop:
      return "NOOP";
    case Opcode::kVersion:
      return "VERSION";
    case Opcode::kStat:
      return "STAT";
    case Opcode::kVerbosity:
      return "VERBOSITY";
    case Opcode::kTouch:
      return "TOUCH";
    case Opcode::kGat:
      return "GAT";
    case Opcode::kGatQ:
      return "GATQ";
    case Opcode::kHello:
      return "HELLO";
    case Opcode::kSaslListMechs:
      return "SASL_LIST_MECHS";
    case Opcode::kSaslAuth:
      return "SASL_AUTH";
    case Opcode::kSaslStep:
      return "SASL_STEP";
    case Opcode::kGetMeta:
      return "GET_META";
    case Opcode::kGetClusterConfig:
      return "GET_CLUSTER_CONFIG";
    case Opcode::kGetErrorMap:
      return "GET_ERROR_MAP";
    case Opcode::kSetVbucket:
      return "SET_VBUCKET";
    case Opcode::kGetAllVbSeqnos:
      return "GET_ALL_VB_SEQNOS";
    case Opcode::kDcpOpen:
      return "DCP_OPEN";
    case Opcode::kDcpSeqnoAcknowledged:
      return "DCP_SEQNO_ACKNOWLEDGED";
    case Opcode::kDcpCloseStream:
      return "DCP_CLOSE_STREAM";
    case Opcode::kDcpStreamReq:
      return "DCP_STREAM_REQ";
    case Opcode::kDcpStreamEnd:
      return "DCP_STREAM_END";
    case Opcode::kDcpSnapshotMarker:
      return "DCP_SNAPSHOT_MARKER";
    case Opcode::kDcpMutation:
      return "DCP_MUTATION";
    case Opcode::kDcpDeletion:
      return "DCP_DELETION";
    case Opcode::kDcpNoop:
      return "DCP_NOOP";
    case Opcode::kDcpBufferAcknowledgement:
      return "DCP_BUFFER_ACKNOWLEDGEMENT";
    case Opcode::kDcpControl:
      return "DCP_CONTROL";
    case Opcode::kDcpPrepare:
      return "DCP_PREPARE";
    case Opcode::kDcpCommit:
      return "DCP_COMMIT";
    case Opcode::kDcpAbort:
      return "DCP_ABORT";
    case Opcode::kGetReplica:
      return "GET_REPLICA";
    case Opcode::kSetParam:
      return "SET_PARAM";
    case Opcode::kSelectBucket:
      return "SELECT_BUCKET";
    case Opcode::kSubdocGet:
      return "SUBDOC_GET";
    case Opcode::kSubdocExists:
      return "SUBDOC_EXISTS";
    case Opcode::kSubdocDictAdd:
      return "SUBDOC_DICT_ADD";
    case Opcode::kSubdocDictUpsert:
      return "SUBDOC_DICT_UPSERT";
    case Opcode::kSubdocDelete:
      return "SUBDOC_DELETE";
    case Opcode::kSubdocReplace:
      return "SUBDOC_REPLACE";
    case Opcode::kSubdocArrayPushLast:
      return "SUBDOC_ARRAY_PUSH_LAST";
    case Opcode::kSubdocArrayPushFirst:
      return "SUBDOC_ARRAY_PUSH_FIRST";
    case Opcode::kSubdocArrayInsert:
      return "SUBDOC_ARRAY_INSERT";
    case Opcode::kSubdocArrayAddUnique:
      return "SUBDOC_ARRAY_ADD_UNIQUE";
    case Opcode::kSubdocCounter:
      return "SUBDOC_COUNTER";
    case Opcode::kSubdocMultiLookup:
      return "SUBDOC_MULTI_LOOKUP";
    case Opcode::kSubdocMultiMutation:
      return "SUBDOC_MULTI_MUTATION";
    case Opcode::kSubdocGetCount:
      return "SUBDOC_GET_COUNT";
    case Opcode::kSubdocReplaceBodyWithXattr:
      return "SUBDOC_REPLACE_BODY_WITH_XATTR";
  }
  return "UNKNOWN";
}

bool isKnownOpcode(Opcode opcode) noexcept {
  switch (opcode) {
    case Opcode::kDcpStreamEnd:
    case Opcode::kDcpSnapshotMarker:
    case Opcode::kDcpMutation:
    case Opcode::kDcpDeletion:
    case Opcode::kDcpNoop:
    case Opcode::kDcpPrepare:
    case Opcode::kDcpCommit:
    case Opcode::kDcpAbort:
      return false;
    default:
      return toString(opcode) != "UNKNOWN";
  }
}

Opcode unquiet(Opcode opcode) noexcept {
  switch (opcode) {
    case Opcode::kGetQ:
      return Opcode::kGet;
    case Opcode::kGetKQ:
      return Opcode::kGetK;
    case Opcode::kSetQ:
      return Opcode::kSet;
    case Opcode::kAddQ:
      return Opcode::kAdd;
    case Opcode::kReplaceQ:
      return Opcode::kReplace;
    case Opcode::kDeleteQ:
      return Opcode::kDelete;
    case Opcode::kIncrementQ:
      return Opcode::kIncrement;
    case Opcode::kDecrementQ:
      return Opcode::kDecrement;
    case Opcode::kQuitQ:
      return Opcode::kQuit;
    case Opcode::kFlushQ:
      return Opcode::kFlush;
    case Opcode::kAppendQ:
      return Opcode::kAppend;
    case Opcode::kPrependQ:
      return Opcode::kPrepend;
    case Opcode::kGatQ:
      return Opcode::kGat;
    default:
      return opcode;
  }
}

bool isMutation(Opcode opcode) noexcept {
  switch (unquiet(opcode)) {
    case Opcode::kSet:
    case Opcode::kAdd:
    case Opcode::kReplace:
    case Opcode::kDelete:
    case Opcode::kIncrement:
    case Opcode::kDecrement:
    case Opcode::kAppend:
    case Opcode::kPrepend:
      return true;
    default:
      return isSubdocMutation(opcode);
  }
}

bool isSubdocSinglePathLookup(Opcode opcode) noexcept {
  return opcode == Opcode::kSubdocGet || opcode == Opcode::kSubdocExists ||
         opcode == Opcode::kSubdocGetCount;
}

bool isSubdocSinglePathMutation(Opcode opcode) noexcept {
  const auto byte = static_cast<uint8_t>(opcode);
  return (byte >= static_cast<uint8_t>(Opcode::kSubdocDictAdd) &&
          byte <= static_cast<uint8_t>(Opcode::kSubdocCounter)) ||
         opcode == Opcode::kSubdocReplaceBodyWithXattr;
}

bool isSubdocMutation(Opcode opcode) noexcept {
  return isSubdocSinglePathMutation(opcode) || opcode == Opcode::kSubdocMultiMutation;
}

}  // namespace syncwrite::server::protocol
