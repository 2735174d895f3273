// Server-side request parsing: a framed packet (from PacketReader) to a validated Request, or
// the status answered instead (with the request's opcode and opaque; the connection is kept).
//
// parseRequest checks, in this order (first failure wins):
//   1. the opcode is one syncwrite implements          else kUnknownCommand
//   2. section lengths fit the body; 3. datatype is raw (0) or JSON (1)  else kEinval
//   4. key length <= 250 (except HELLO's agent name)    else kEinval
//   5. framing extras well formed: ids 0 (reorder, empty), 3 (tracing, non-empty, ignored) and
//      1 (durability, on a mutation (isMutation()) only, 1 or 3 bytes; repeated, the last one
//      wins, see request.cc)  else kEinval; a level byte naming no level or 0 (none), a timeout
//      0 or 0xffff  -> kDurabilityInvalidLevel
//   6. the opcode's extras / key / value shape (below)  else kEinval
//   7. no request CAS but on SET, REPLACE, DELETE, APPEND, PREPEND, SELECT_BUCKET,
//      DCP_OPEN (as kv_engine's validator) and FLUSH (kv_engine refuses it)  else kEinval
//   8. HELLO's codes, SET_PARAM's type, a state, GET_ERROR_MAP's 2 bytes  else kEinval
// Shapes (kv_engine docs/BinaryProtocol.md, docs/SubDocument.md); what a shape does not name
// must be absent; a quiet variant has its loud form's (SETQ as SET, GETKQ as GETK, GATQ as GAT):
//   GET, GETK, DELETE       no extras, key, no value
//   SET, ADD, REPLACE       8-byte extras (flags, expiry), key, any value
//   APPEND, PREPEND         no extras, key, any value
//   INCREMENT, DECREMENT    20-byte extras (delta, initial, expiry), key
//   TOUCH, GAT              4-byte extras (expiry), key
//   GET_META                no extras or 1 byte (the answer's version), key
//   FLUSH                   no extras or 4 (a delay, refused unless 0)
//   QUIT, NOOP, VERSION, SASL_LIST_MECHS, GET_CLUSTER_CONFIG: nothing
//   VERBOSITY               4-byte extras (the level); STAT: optional key (the group)
//   HELLO                   optional key (agent), value of 2-byte codes; SELECT_BUCKET: key
//   SET_PARAM               4-byte extras (ParamType 1..6), key, value (text, may be empty)
//   SET_VBUCKET             1 (or deprecated 4) byte extras, state 1..4; any value
//   GET_ALL_VB_SEQNOS       no extras or 4 (state filter: 0 alive, or 1..4)
//   DCP_OPEN 8-byte extras (seqno, flags), key, any value; DCP_SEQNO_ACKNOWLEDGED 8-byte extras
//   DCP_STREAM_REQ 48-byte extras, any value; DCP_CONTROL key, any value;
//   DCP_BUFFER_ACKNOWLEDGEMENT 4-byte extras; DCP_CLOSE_STREAM nothing; GET_REPLICA key
//   SASL_AUTH, SASL_STEP key (mechanism), any value; GET_ERROR_MAP 2-byte value (the version)
//   single-path SUBDOC_*    extras 3 (path length, path flags), 4 (+ doc flags), 7 (+ expiry)
//                           or 8 (+ expiry, doc flags); key; value = path then the spec's
//                           value, path length <= value length; a CAS on mutations only
//   SUBDOC_MULTI_LOOKUP     extras 0 or 1 (doc flags); key; value = specs
//   SUBDOC_MULTI_MUTATION   extras 0, 1 (doc flags), 4 (expiry) or 5 (expiry, doc flags);
//                           key; value = specs (decoded and checked by subdoc_request.h); any CAS
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

  // A mutation (isMutation(): SET, ADD, REPLACE, DELETE, INCREMENT,
  // DECREMENT, APPEND, PREPEND) with a durability frame. Timeout is
  // Timeout::bucketDefault() when the frame has no timeout.
  std::optional<durability::Requirements> durability;

  // Decoded extras, meaningful only for their opcode.
  uint32_t flags = 0;                                // SET/ADD/REPLACE
  uint32_t expiry = 0;                               // SET/ADD/REPLACE/TOUCH/GAT
  ParamType param_type = ParamType::kFlush;          // SET_PARAM
  VbucketState vbucket_state = VbucketState::kDead;  // SET_VBUCKET
  uint32_t dcp_flags = 0;                            // DCP_OPEN
  uint64_t prepared_seqno = 0;                       // DCP_SEQNO_ACKNOWLEDGED
  // DCP_STREAM_REQ's extras (docs/dcp/documentation/commands/stream-request.md).
  struct StreamRequest {
    uint32_t flags = 0;
    uint64_t start_seqno = 0;
    uint64_t end_seqno = 0;
    uint64_t vbucket_uuid = 0;
    uint64_t snap_start_seqno = 0;
    uint64_t snap_end_seqno = 0;
  } stream_request;
  uint32_t buffer_ack_bytes = 0;  // DCP_BUFFER_ACKNOWLEDGEMENT
  // GET_ALL_VB_SEQNOS: 0 (no extras) every vbucket but the dead ones, or
  // 1..4 (VbucketState) the vbuckets in that state.
  uint32_t vbucket_state_filter = 0;
  uint64_t delta = 0;    // INCREMENT/DECREMENT
  uint64_t initial = 0;  // INCREMENT/DECREMENT
  // SUBDOC_*: the single-path extras (path length and path flags) and the
  // document flags of any of them; `expiry` holds the expiry when
  // `has_expiry` (absent: the mutation stores the document without one).
  uint16_t subdoc_path_length = 0;
  uint8_t subdoc_path_flags = 0;
  uint8_t subdoc_doc_flags = 0;
  bool has_expiry = false;
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
