// Server-side request parsing: a framed packet (from PacketReader) to a
// validated Request, or the status the server answers instead.
//
// parseRequest checks, in this order (first failure wins):
//   1. the opcode is one syncwrite implements          else kUnknownCommand
//   2. section lengths fit the body                     else kEinval
//   3. datatype is raw (0) or JSON (1)                  else kEinval
//   4. key length <= 250 (except HELLO's agent name)    else kEinval
//   5. framing extras: every frame well formed; only ids 0 (reorder, length
//      0), 1 (durability) and 3 (tracing, ignored); durability only on
//      a mutation (isMutation()), 1 or 3 bytes long  else kEinval (repeated:
//      the last one wins, see request.cc);
//      level byte names no level, or is 0 (none)        -> kDurabilityInvalidLevel;
//      timeout 0 or 0xffff                              -> kDurabilityInvalidLevel
//   6. the opcode's extras / key / value shape (below)  else kEinval
//   7. no request CAS where kv_engine's validator expects none: every
//      command but SET, REPLACE, DELETE, APPEND, PREPEND, SELECT_BUCKET and
//      DCP_OPEN (and FLUSH, which kv_engine refuses)    else kEinval
//
// Shapes (after kv_engine docs/BinaryProtocol.md):
// (A quiet variant has the shape of its loud form: SETQ as SET, GETKQ as GETK,
// GATQ as GAT.)
//   GET, GETK, DELETE  no extras, key, no value
//   FLUSH              no extras or 4 (a delay, refused unless 0), nothing else
//   SET, ADD, REPLACE  8-byte extras (flags, expiry), key, any value
//   INCREMENT, DECREMENT  20-byte extras (delta, initial, expiry), key, no value
//   APPEND, PREPEND    no extras, key, any value
//   QUIT, NOOP, VERSION nothing
//   VERBOSITY          4-byte extras (the level), nothing else
//   STAT               no extras, optional key (the group), no value
//   HELLO              no extras, optional key (agent), value of 2-byte codes
//   SELECT_BUCKET      no extras, key (bucket name), no value
//   SET_PARAM          4-byte extras (ParamType 1..6), key (config key), value
//                      (new value as text; may be empty)
//   SET_VBUCKET        1-byte (or deprecated 4-byte) extras, state 1..4, no key,
//                      no value
//   DCP_OPEN           8-byte extras (seqno, flags), key (connection name),
//                      any value
//   DCP_SEQNO_ACKNOWLEDGED  8-byte extras (prepared seqno), no key, no value
//   TOUCH, GAT         4-byte extras (expiry), key, no value
//   SASL_LIST_MECHS, GET_CLUSTER_CONFIG  nothing
//   SASL_AUTH, SASL_STEP  no extras, key (mechanism), any value (the message)
//   GET_META           no extras or 1 byte (the version of the answer), key
//   GET_ERROR_MAP      no extras, no key, 2-byte value (the version asked)
//
// The server answers an error with the request's opcode and opaque (always
// filled in, even on failure) and keeps the connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "durability/requirements.h"
#include "server/protocol/command_values.h"
#include "server/protocol/opcode.h"
#include "server/protocol/packet.h"
#include "server/protocol/status.h"

namespace syncwrite::server::protocol {

// Datatype bits (kv_engine docs/BinaryProtocol.md "Data Types"); syncwrite
// accepts raw and JSON values and negotiates neither Snappy nor XATTR.
inline constexpr uint8_t kDatatypeRaw = 0x00;
inline constexpr uint8_t kDatatypeJson = 0x01;

// A validated request. The string_views point into the packet's buffer.
struct Request {
  Opcode opcode = Opcode::kNoop;
  uint32_t opaque = 0;
  uint16_t vbucket = 0;
  uint64_t cas = 0;
  uint8_t datatype = 0;
  std::string_view extras;
  std::string_view key;
  std::string_view value;

  // SET/ADD/REPLACE/DELETE with a durability frame. Timeout is
  // Timeout::bucketDefault() when the frame has no timeout.
  std::optional<durability::Requirements> durability;

  // Decoded extras, meaningful only for their opcode.
  uint32_t flags = 0;                                // SET/ADD/REPLACE
  uint32_t expiry = 0;                               // SET/ADD/REPLACE/TOUCH/GAT
  ParamType param_type = ParamType::kFlush;          // SET_PARAM
  VbucketState vbucket_state = VbucketState::kDead;  // SET_VBUCKET
  uint32_t dcp_flags = 0;                            // DCP_OPEN
  uint64_t prepared_seqno = 0;                       // DCP_SEQNO_ACKNOWLEDGED
  // GET_ALL_VB_SEQNOS: 0 (no extras) every vbucket but the dead ones, or
  // 1..4 (VbucketState) the vbuckets in that state.
  uint32_t vbucket_state_filter = 0;
  uint64_t delta = 0;    // INCREMENT/DECREMENT
  uint64_t initial = 0;  // INCREMENT/DECREMENT
};

struct ParseResult {
  // kSuccess: `request` is fully valid. Otherwise the status to answer, with
  // `message` saying what was wrong (sent back as the error context).
  Status status = Status::kSuccess;
  std::string message;
  // Always holds opcode, opaque, vbucket and cas; the rest only on success.
  Request request;

  bool ok() const noexcept { return status == Status::kSuccess; }
};

// Validates a packet framed by PacketReader(kRequests). Never throws; cost
// O(framing extras) (a HELLO value's length is checked, not its codes), no
// allocation on success.
ParseResult parseRequest(const Packet& packet);

}  // namespace syncwrite::server::protocol
