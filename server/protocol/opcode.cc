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
    case Opcode::kQuit:
      return "QUIT";
    case Opcode::kNoop:
      return "NOOP";
    case Opcode::kVersion:
      return "VERSION";
    case Opcode::kStat:
      return "STAT";
    case Opcode::kTouch:
      return "TOUCH";
    case Opcode::kGat:
      return "GAT";
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
    case Opcode::kDcpOpen:
      return "DCP_OPEN";
    case Opcode::kDcpSeqnoAcknowledged:
      return "DCP_SEQNO_ACKNOWLEDGED";
    case Opcode::kSetParam:
      return "SET_PARAM";
    case Opcode::kSelectBucket:
      return "SELECT_BUCKET";
  }
  return "UNKNOWN";
}

bool isKnownOpcode(Opcode opcode) noexcept { return toString(opcode) != "UNKNOWN"; }

}  // namespace syncwrite::server::protocol
