// Opcodes and magic bytes of the memcached binary protocol (MCBP) subset that
// syncwrite speaks.
//
// Values from couchbase/kv_engine docs/BinaryProtocol.md ("Magic Byte",
// "Command Opcodes") and docs/dcp/documentation/commands/ (DCP_OPEN 0x50,
// DCP_SEQNO_ACKNOWLEDGED 0x61). An Opcode may hold any byte: a request with an
// opcode not listed here still parses far enough to be answered
// UnknownCommand with its own opcode and opaque.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncwrite::server::protocol {

// Byte 0 of every packet.
enum class Magic : uint8_t {
  kClientRequest = 0x80,     // 24-byte header, 2-byte key length, no framing extras
  kAltClientRequest = 0x08,  // byte 2 = framing extras length, byte 3 = key length
  kClientResponse = 0x81,
  kAltClientResponse = 0x18,  // response with framing extras (never sent by syncwrite)
};

enum class Opcode : uint8_t {
  kGet = 0x00,
  kSet = 0x01,
  kAdd = 0x02,
  kReplace = 0x03,
  kDelete = 0x04,
  kQuit = 0x07,
  kNoop = 0x0a,
  kVersion = 0x0b,
  kStat = 0x10,
  kTouch = 0x1c,
  kGat = 0x1d,
  kHello = 0x1f,
  kSaslListMechs = 0x20,
  kSaslAuth = 0x21,
  kSaslStep = 0x22,
  kSetVbucket = 0x3d,
  kDcpOpen = 0x50,
  kDcpSeqnoAcknowledged = 0x61,
  kSetParam = 0x82,
  kSelectBucket = 0x89,
  kGetMeta = 0xa0,
  kGetClusterConfig = 0xb5,
  kGetErrorMap = 0xfe,
};

// True for the opcodes listed above; false for any other byte.
bool isKnownOpcode(Opcode opcode) noexcept;

// True for SET, ADD, REPLACE and DELETE: the only opcodes that accept a
// durability requirement frame.
constexpr bool isMutation(Opcode opcode) noexcept {
  return opcode == Opcode::kSet || opcode == Opcode::kAdd || opcode == Opcode::kReplace ||
         opcode == Opcode::kDelete;
}

// Upper-case kv_engine spelling ("SET", "DCP_SEQNO_ACKNOWLEDGED"), or
// "UNKNOWN" for a byte not in the enum.
std::string_view toString(Opcode opcode) noexcept;

}  // namespace syncwrite::server::protocol
