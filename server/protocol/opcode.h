// Opcodes and magic bytes of the memcached binary protocol (MCBP) subset that
// syncwrite speaks.
//
// Values from couchbase/kv_engine docs/BinaryProtocol.md ("Magic Byte",
// "Command Opcodes") and docs/dcp/documentation/commands/ (DCP_OPEN 0x50 to
// DCP_ABORT 0x63). An Opcode may hold any byte: a request with an
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
  kIncrement = 0x05,
  kDecrement = 0x06,
  kQuit = 0x07,
  kFlush = 0x08,
  kGetQ = 0x09,
  kNoop = 0x0a,
  kVersion = 0x0b,
  kGetK = 0x0c,
  kGetKQ = 0x0d,
  kAppend = 0x0e,
  kPrepend = 0x0f,
  kStat = 0x10,
  kSetQ = 0x11,
  kAddQ = 0x12,
  kReplaceQ = 0x13,
  kDeleteQ = 0x14,
  kIncrementQ = 0x15,
  kDecrementQ = 0x16,
  kQuitQ = 0x17,
  kFlushQ = 0x18,
  kAppendQ = 0x19,
  kPrependQ = 0x1a,
  kVerbosity = 0x1b,
  kTouch = 0x1c,
  kGat = 0x1d,
  kGatQ = 0x1e,
  kHello = 0x1f,
  kSaslListMechs = 0x20,
  kSaslAuth = 0x21,
  kSaslStep = 0x22,
  kSetVbucket = 0x3d,
  kGetAllVbSeqnos = 0x48,
  kDcpOpen = 0x50,
  kDcpCloseStream = 0x52,
  kDcpStreamReq = 0x53,
  kDcpStreamEnd = 0x55,
  kDcpSnapshotMarker = 0x56,
  kDcpMutation = 0x57,
  kDcpDeletion = 0x58,
  kDcpNoop = 0x5c,
  kDcpBufferAcknowledgement = 0x5d,
  kDcpControl = 0x5e,
  kDcpPrepare = 0x60,
  kDcpSeqnoAcknowledged = 0x61,
  kDcpCommit = 0x62,
  kDcpAbort = 0x63,
  kSetParam = 0x82,
  kGetReplica = 0x83,
  kSelectBucket = 0x89,
  kGetMeta = 0xa0,
  kGetClusterConfig = 0xb5,
  // Sub-document commands (kv_engine include/mcbp/protocol/opcode.h).
  kSubdocGet = 0xc5,
  kSubdocExists = 0xc6,
  kSubdocDictAdd = 0xc7,
  kSubdocDictUpsert = 0xc8,
  kSubdocDelete = 0xc9,
  kSubdocReplace = 0xca,
  kSubdocArrayPushLast = 0xcb,
  kSubdocArrayPushFirst = 0xcc,
  kSubdocArrayInsert = 0xcd,
  kSubdocArrayAddUnique = 0xce,
  kSubdocCounter = 0xcf,
  kSubdocMultiLookup = 0xd0,
  kSubdocMultiMutation = 0xd1,
  kSubdocGetCount = 0xd2,
  kSubdocReplaceBodyWithXattr = 0xd3,
  kGetErrorMap = 0xfe,
};

// True for the opcodes a server parses as requests: those listed above but
// the DCP messages only a producer sends (STREAM_END, SNAPSHOT_MARKER,
// MUTATION, DELETION, PREPARE, COMMIT, ABORT, NOOP), which a client decodes
// (dcp_messages.h); false for any other byte.
bool isKnownOpcode(Opcode opcode) noexcept;

// The opcode a quiet variant is the quiet form of (SETQ -> SET, GETKQ ->
// GETK, QUITQ -> QUIT, ...); any other opcode itself.
Opcode unquiet(Opcode opcode) noexcept;

// True for the quiet variants (GETQ, GETKQ, SETQ, ..., QUITQ): they answer
// only on failure (GETQ, GETKQ and GATQ: not on a miss either, but on a
// hit; QUITQ never).
constexpr bool isQuiet(Opcode opcode) noexcept {
  switch (opcode) {
    case Opcode::kGetQ:
    case Opcode::kGetKQ:
    case Opcode::kSetQ:
    case Opcode::kAddQ:
    case Opcode::kReplaceQ:
    case Opcode::kDeleteQ:
    case Opcode::kIncrementQ:
    case Opcode::kDecrementQ:
    case Opcode::kQuitQ:
    case Opcode::kFlushQ:
    case Opcode::kAppendQ:
    case Opcode::kPrependQ:
    case Opcode::kGatQ:
      return true;
    default:
      return false;
  }
}

// True for the mutations, quiet or not: SET, ADD, REPLACE, DELETE,
// INCREMENT, DECREMENT, APPEND, PREPEND, and the sub-document mutations
// (isSubdocMutation) — the opcodes that accept a durability requirement frame.
bool isMutation(Opcode opcode) noexcept;

// The single-path sub-document lookups: SUBDOC_GET, SUBDOC_EXISTS,
// SUBDOC_GET_COUNT.
bool isSubdocSinglePathLookup(Opcode opcode) noexcept;
// The single-path sub-document mutations: DICT_ADD .. COUNTER and
// REPLACE_BODY_WITH_XATTR.
bool isSubdocSinglePathMutation(Opcode opcode) noexcept;
// The single-path mutations and SUBDOC_MULTI_MUTATION.
bool isSubdocMutation(Opcode opcode) noexcept;

// Upper-case kv_engine spelling ("SET", "DCP_SEQNO_ACKNOWLEDGED"), or
// "UNKNOWN" for a byte not in the enum.
std::string_view toString(Opcode opcode) noexcept;

}  // namespace syncwrite::server::protocol
