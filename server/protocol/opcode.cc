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
    case Opcode::kHello:
      return "HELLO";
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
