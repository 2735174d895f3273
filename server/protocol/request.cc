#include "server/protocol/request.h"

#include <absl/strings/str_cat.h>

#include "durability/level.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/frame_info.h"

namespace syncwrite::server::protocol {

namespace {

constexpr uint16_t kReservedTimeoutMax = 0xffff;

void setError(ParseResult& result, Status status, std::string message) {
  result.status = status;
  result.message = std::move(message);
}

// setError() and hand the result back (for `return refuse(...)` in parseRequest).
ParseResult refuse(ParseResult& result, Status status, std::string message) {
  setError(result, status, std::move(message));
  return std::move(result);
}

// What an opcode's body must look like.
enum class Need { kNone, kRequired, kOptional, kAny };

// What a request's CAS may be.
enum class Cas { kAny, kZero };

struct Shape {
  int extras_a;  // allowed extras length (-1: any)
  int extras_b;  // second allowed extras length (-1: none)
  Need key;
  Need value;
  // kZero unless kv_engine's validator takes a CAS (it expects none,
  // ExpectedCas::NotSet in daemon/mcbp_validators.cc, on all but the writes
  // that compare one, SELECT_BUCKET and DCP_OPEN): a CAS there is Einval.
  Cas cas = Cas::kZero;
};

Shape shapeOf(Opcode opcode) {
  // Sub-document commands take several extras lengths: parseSubdocExtras checks them.
  if (isSubdocSinglePathLookup(opcode) || opcode == Opcode::kSubdocMultiLookup) {
    return {-1, -1, Need::kRequired, Need::kAny};
  }
  if (isSubdocMutation(opcode)) return {-1, -1, Need::kRequired, Need::kAny, Cas::kAny};
  switch (unquiet(opcode)) {
    case Opcode::kGetK:
      return {0, -1, Need::kRequired, Need::kNone};
    case Opcode::kFlush:  // memcached's rule: kv_engine serves no FLUSH
      return {0, 4, Need::kNone, Need::kNone, Cas::kAny};
    case Opcode::kIncrement:
    case Opcode::kDecrement:
      return {20, -1, Need::kRequired, Need::kNone};
    case Opcode::kAppend:
    case Opcode::kPrepend:
      return {0, -1, Need::kRequired, Need::kAny, Cas::kAny};
    case Opcode::kGet:
      return {0, -1, Need::kRequired, Need::kNone};
    case Opcode::kDelete:
      return {0, -1, Need::kRequired, Need::kNone, Cas::kAny};
    case Opcode::kSet:
    case Opcode::kReplace:
      return {8, -1, Need::kRequired, Need::kAny, Cas::kAny};
    case Opcode::kAdd:  // no item to compare a CAS with
      return {8, -1, Need::kRequired, Need::kAny};
    case Opcode::kQuit:
    case Opcode::kNoop:
    case Opcode::kVersion:
      return {0, -1, Need::kNone, Need::kNone};
    case Opcode::kVerbosity:
      return {4, -1, Need::kNone, Need::kNone};
    case Opcode::kStat:
      return {0, -1, Need::kOptional, Need::kNone};
    case Opcode::kHello:
      return {0, -1, Need::kOptional, Need::kAny};
    case Opcode::kSelectBucket:
      return {0, -1, Need::kRequired, Need::kNone, Cas::kAny};
    case Opcode::kSetParam:
      return {4, -1, Need::kRequired, Need::kAny};
    case Opcode::kSetVbucket:
      return {1, 4, Need::kNone, Need::kAny};
    case Opcode::kDcpOpen:
      return {8, -1, Need::kRequired, Need::kAny, Cas::kAny};
    case Opcode::kDcpSeqnoAcknowledged:
      return {8, -1, Need::kNone, Need::kNone};
    case Opcode::kDcpStreamReq:
      return {48, -1, Need::kNone, Need::kAny};
    case Opcode::kDcpControl:
      return {0, -1, Need::kRequired, Need::kAny};
    case Opcode::kDcpBufferAcknowledgement:
      return {4, -1, Need::kNone, Need::kNone};
    case Opcode::kDcpCloseStream:
      return {0, -1, Need::kNone, Need::kNone};
    case Opcode::kGetReplica:
      return {0, -1, Need::kRequired, Need::kNone};
    case Opcode::kGetAllVbSeqnos:
      return {0, 4, Need::kNone, Need::kNone};
    case Opcode::kTouch:
    case Opcode::kGat:
      return {4, -1, Need::kRequired, Need::kNone};
    case Opcode::kSaslListMechs:
    case Opcode::kGetClusterConfig:
      return {0, -1, Need::kNone, Need::kNone};
    case Opcode::kSaslAuth:
    case Opcode::kSaslStep:
      return {0, -1, Need::kRequired, Need::kAny};
    case Opcode::kGetMeta:
      return {0, 1, Need::kRequired, Need::kNone};
    case Opcode::kGetErrorMap:
      return {0, -1, Need::kNone, Need::kRequired};
    default:  // the quiet forms: unquiet() mapped them above
      break;
  }
  return {0, -1, Need::kNone, Need::kNone};
}

bool fits(Need need, size_t size) {
  switch (need) {
    case Need::kNone:
      return size == 0;
    case Need::kRequired:
      return size > 0;
    case Need::kOptional:
    case Need::kAny:
      return true;
  }
  return false;
}

std::string_view describeNeed(Need need) {
  switch (need) {
    case Need::kNone:
      return "none";
    case Need::kRequired:
      return "one";
    case Need::kOptional:
    case Need::kAny:
      return "any";
  }
  return "?";
}

// Step 5 of the header comment. Leaves result.request.durability set when a
// valid durability frame is present.
bool parseFrames(const Packet& packet, ParseResult& result) {
  const Opcode opcode = packet.header.opcode;
  FrameInfoReader frames(packet.framing_extras);
  while (auto frame = frames.next()) {
    switch (static_cast<FrameId>(frame->id)) {
      case FrameId::kReorder:
        if (!frame->data.empty()) {
          setError(result, Status::kEinval,
                   absl::StrCat("reorder frame must be empty, has ", frame->data.size(), " bytes"));
          return false;
        }
        continue;  // permission only: syncwrite answers in order regardless
      case FrameId::kOpenTracingContext:
        if (frame->data.empty()) {
          setError(result, Status::kEinval, "OpenTracing frame must carry a context");
          return false;
        }
        continue;  // no tracing here; the context is ignored
      case FrameId::kDurabilityRequirement:
        break;
      default:
        setError(result, Status::kEinval,
                 absl::StrCat("unsupported frame id ", frame->id, " for ",
                              std::string(toString(opcode))));
        return false;
    }
    if (!isMutation(opcode)) {
      setError(result, Status::kEinval,
               absl::StrCat("durability requirement frame is only valid on a mutation (SET, ADD, "
                            "REPLACE, DELETE, INCREMENT, DECREMENT, APPEND, PREPEND, SUBDOC_* "
                            "mutations), not ",
                            std::string(toString(opcode))));
      return false;
    }
    // A repeated durability frame is accepted and the last one wins: the
    // Couchbase C++ SDK (couchbase-cxx-client 1.3.2, in the Node SDK 4.7.1)
    // appends the frame again each time it retries a request after
    // SyncWriteInProgress, so refusing it would fail every such retry.
    const std::string_view data = frame->data;
    if (data.size() != 1 && data.size() != 3) {
      setError(
          result, Status::kEinval,
          absl::StrCat("durability requirement frame must be 1 or 3 bytes, got ", data.size()));
      return false;
    }
    const uint8_t level_byte = static_cast<uint8_t>(data[0]);
    const std::optional<durability::Level> level = durability::levelFromWire(level_byte);
    if (!level || *level == durability::Level::kNone) {
      setError(result, Status::kDurabilityInvalidLevel,
               absl::StrCat("invalid durability level ", level_byte,
                            " (expected 1 majority, 2 majority_and_persist_on_master, 3 "
                            "persist_to_majority)"));
      return false;
    }
    durability::Requirements requirements{*level, durability::Timeout::bucketDefault()};
    if (data.size() == 3) {
      const uint16_t ms = wire::load16(data, 1);
      const auto timeout = durability::Timeout::fromMillis(ms);
      if (!timeout || ms == kReservedTimeoutMax) {
        // 0xa0, as kv_engine: its Timeout(uint16_t) throws for 0 and 0xffff,
        // and parseFrameExtras answers a throw from a 1- or 3-byte frame
        // DurabilityInvalidLevel (daemon/mcbp_validators.cc).
        setError(result, Status::kDurabilityInvalidLevel,
                 absl::StrCat("durability timeout ", ms, " ms is reserved (expected 1..",
                              durability::Timeout::kMaxMillis, ")"));
        return false;
      }
      requirements.timeout = *timeout;
    }
    result.request.durability = requirements;
  }
  if (frames.malformed()) {
    setError(result, Status::kEinval, "malformed framing extras");
    return false;
  }
  return true;
}

// The extras of a SUBDOC_* request (request.h lists the shapes).
bool parseSubdocExtras(const Packet& packet, ParseResult& result) {
  Request& r = result.request;
  const std::string_view extras = packet.extras;
  const Opcode opcode = packet.header.opcode;
  const auto bad = [&](const char* allowed) {
    setError(result, Status::kEinval,
             absl::StrCat(std::string(toString(opcode)), " takes ", allowed,
                          " bytes of extras, got ", extras.size()));
    return false;
  };
  if (opcode == Opcode::kSubdocMultiLookup) {
    if (extras.size() > 1) return bad("0 or 1");
    if (extras.size() == 1) r.subdoc_doc_flags = static_cast<uint8_t>(extras[0]);
    return true;
  }
  if (opcode == Opcode::kSubdocMultiMutation) {
    if (!extras.empty() && extras.size() != 1 && extras.size() != 4 && extras.size() != 5) {
      return bad("0, 1, 4 or 5");
    }
    if (extras.size() >= 4) {
      r.expiry = wire::load32(extras, 0);
      r.has_expiry = true;
    }
    if (extras.size() % 2 == 1) r.subdoc_doc_flags = static_cast<uint8_t>(extras.back());
    return true;
  }
  const bool lookup = isSubdocSinglePathLookup(opcode);
  if (lookup ? (extras.size() != 3 && extras.size() != 4)
             : (extras.size() != 3 && extras.size() != 4 && extras.size() != 7 &&
                extras.size() != 8)) {
    return bad(lookup ? "3 or 4" : "3, 4, 7 or 8");
  }
  r.subdoc_path_length = wire::load16(extras, 0);
  r.subdoc_path_flags = static_cast<uint8_t>(extras[2]);
  if (extras.size() >= 7) {
    r.expiry = wire::load32(extras, 3);
    r.has_expiry = true;
  }
  if (extras.size() == 4 || extras.size() == 8) {
    r.subdoc_doc_flags = static_cast<uint8_t>(extras.back());
  }
  if (r.subdoc_path_length > packet.value.size()) {
    setError(result, Status::kEinval,
             absl::StrCat(std::string(toString(opcode)), " path length ", r.subdoc_path_length,
                          " exceeds the value's ", packet.value.size(), " bytes"));
    return false;
  }
  return true;
}

}  // namespace

ParseResult parseRequest(const Packet& packet) {
  ParseResult result;
  const Header& h = packet.header;
  Request& r = result.request;
  r.opcode = h.opcode;
  r.opaque = h.opaque;
  r.vbucket = h.vbucket();
  r.cas = h.cas;
  r.datatype = h.datatype;

  if (!isKnownOpcode(h.opcode)) {
    return refuse(result, Status::kUnknownCommand,
                  absl::StrCat("unknown opcode 0x", absl::Hex(static_cast<uint8_t>(h.opcode))));
  }
  if (!h.sectionsFit() || packet.bytes.size() != kHeaderSize + size_t{h.body_length}) {
    return refuse(
        result, Status::kEinval,
        absl::StrCat("framing extras (", h.framing_extras_length, ") + extras (", h.extras_length,
                     ") + key (", h.key_length, ") exceed the body length ", h.body_length));
  }
  if (h.datatype != kDatatypeRaw && h.datatype != kDatatypeJson) {
    return refuse(
        result, Status::kEinval,
        absl::StrCat("unsupported datatype 0x", absl::Hex(h.datatype), " (only raw and JSON)"));
  }
  if (h.opcode != Opcode::kHello && packet.key.size() > kMaxKeyLength) {
    return refuse(
        result, Status::kEinval,
        absl::StrCat("key of ", packet.key.size(), " bytes is over the limit of ", kMaxKeyLength));
  }
  if (!parseFrames(packet, result)) return result;

  const Shape shape = shapeOf(h.opcode);
  const int extras = static_cast<int>(packet.extras.size());
  if (shape.extras_a >= 0 && extras != shape.extras_a && extras != shape.extras_b) {
    return refuse(result, Status::kEinval,
                  absl::StrCat(std::string(toString(h.opcode)), " needs ", shape.extras_a,
                               " bytes of extras, got ", extras));
  }
  if (!fits(shape.key, packet.key.size())) {
    return refuse(result, Status::kEinval,
                  absl::StrCat(std::string(toString(h.opcode)), " takes ",
                               std::string(describeNeed(shape.key)), " key, got ",
                               packet.key.size(), " bytes"));
  }
  if (!fits(shape.value, packet.value.size())) {
    return refuse(result, Status::kEinval,
                  absl::StrCat(std::string(toString(h.opcode)), " takes no value, got ",
                               packet.value.size(), " bytes"));
  }
  if (shape.cas == Cas::kZero && h.cas != 0) {
    return refuse(result, Status::kEinval,
                  absl::StrCat(std::string(toString(h.opcode)), " takes no CAS, got ", h.cas));
  }

  r.extras = packet.extras;
  r.key = packet.key;
  r.value = packet.value;
  switch (unquiet(h.opcode)) {
    case Opcode::kSet:
    case Opcode::kAdd:
    case Opcode::kReplace:
      r.flags = wire::load32(packet.extras, 0);
      r.expiry = wire::load32(packet.extras, 4);
      break;
    case Opcode::kIncrement:
    case Opcode::kDecrement:
      r.delta = wire::load64(packet.extras, 0);
      r.initial = wire::load64(packet.extras, 8);
      r.expiry = wire::load32(packet.extras, 16);
      break;
    case Opcode::kHello:
      if (packet.value.size() % 2 != 0) {
        return refuse(result, Status::kEinval,
                      absl::StrCat("HELLO value must be 2-byte feature codes, got ",
                                   packet.value.size(), " bytes"));
      }
      break;
    case Opcode::kSubdocGet:
    case Opcode::kSubdocExists:
    case Opcode::kSubdocDictAdd:
    case Opcode::kSubdocDictUpsert:
    case Opcode::kSubdocDelete:
    case Opcode::kSubdocReplace:
    case Opcode::kSubdocArrayPushLast:
    case Opcode::kSubdocArrayPushFirst:
    case Opcode::kSubdocArrayInsert:
    case Opcode::kSubdocArrayAddUnique:
    case Opcode::kSubdocCounter:
    case Opcode::kSubdocMultiLookup:
    case Opcode::kSubdocMultiMutation:
    case Opcode::kSubdocGetCount:
    case Opcode::kSubdocReplaceBodyWithXattr:
      if (!parseSubdocExtras(packet, result)) return result;
      break;
    case Opcode::kSetParam: {
      const uint32_t type = wire::load32(packet.extras, 0);
      const auto param_type = paramTypeFromWire(type);
      if (!param_type) {
        return refuse(result, Status::kEinval,
                      absl::StrCat("SET_PARAM type ", type, " is not one of 1..6"));
      }
      r.param_type = *param_type;
      break;
    }
    case Opcode::kSetVbucket: {
      const uint32_t state = packet.extras.size() == 1 ? static_cast<uint8_t>(packet.extras[0])
                                                       : wire::load32(packet.extras, 0);
      const auto vbucket_state = vbucketStateFromWire(state);
      if (!vbucket_state) {
        return refuse(result, Status::kEinval,
                      absl::StrCat("SET_VBUCKET state ", state,
                                   " is not one of 1 active, 2 replica, 3 pending, 4 dead"));
      }
      r.vbucket_state = *vbucket_state;
      break;
    }
    case Opcode::kDcpOpen:
      r.dcp_flags = wire::load32(packet.extras, 4);
      break;
    case Opcode::kTouch:
    case Opcode::kGat:
      r.expiry = wire::load32(packet.extras, 0);
      break;
    case Opcode::kFlush:
      if (packet.extras.size() == 4) r.expiry = wire::load32(packet.extras, 0);
      break;
    case Opcode::kGetErrorMap:
      if (packet.value.size() != 2) {
        return refuse(result, Status::kEinval,
                      absl::StrCat("GET_ERROR_MAP value must be a 2-byte version, got ",
                                   packet.value.size(), " bytes"));
      }
      break;
    case Opcode::kDcpSeqnoAcknowledged:
      r.prepared_seqno = wire::load64(packet.extras, 0);
      break;
    case Opcode::kDcpStreamReq:
      r.stream_request = {.flags = wire::load32(packet.extras, 0),
                          .start_seqno = wire::load64(packet.extras, 8),
                          .end_seqno = wire::load64(packet.extras, 16),
                          .vbucket_uuid = wire::load64(packet.extras, 24),
                          .snap_start_seqno = wire::load64(packet.extras, 32),
                          .snap_end_seqno = wire::load64(packet.extras, 40)};
      break;
    case Opcode::kDcpBufferAcknowledgement:
      r.buffer_ack_bytes = wire::load32(packet.extras, 0);
      break;
    case Opcode::kGetAllVbSeqnos:
      if (packet.extras.size() == 4) {
        // kv_engine's docs/dcp/documentation/commands/get_seqno.md: 0 alive
        // (active, replica and pending), then SET_VBUCKET's 1..4.
        const uint32_t state = wire::load32(packet.extras, 0);
        if (state != 0 && !vbucketStateFromWire(state)) {
          return refuse(result, Status::kEinval,
                        absl::StrCat("GET_ALL_VB_SEQNOS state ", state,
                                     " is not one of 0 alive, 1 active, 2 replica, 3 pending, "
                                     "4 dead"));
        }
        r.vbucket_state_filter = state;
      }
      break;
    default:
      break;
  }
  return result;
}

}  // namespace syncwrite::server::protocol
