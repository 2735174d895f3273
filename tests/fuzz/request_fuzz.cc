// Fuzz target: protocol::parseRequest and the durability frame, and the
// answer to a refused request.
//
// Input: one request packet, header and body; its body length (bytes 8-11)
// is set to the input's length - 24 first, so that mutations explore the
// sections rather than the framing (packet_reader_fuzz covers the framing).
//
// Properties:
//  - the framing extras, when well formed, re-encode frame by frame
//    (appendFrameInfo) to the same bytes: the encoding has one spelling per
//    id and length;
//  - a parsed request re-encoded with the client's encoder (appendRequest)
//    parses again to the same Request, every decoded field and the
//    durability requirement included;
//  - it re-encodes to the very same bytes when its framing extras hold
//    nothing but at most one durability frame and its magic is 0x08 exactly
//    when it has framing extras (a reorder or tracing frame, a repeated
//    durability frame, or 0x08 with no frame are accepted but not kept);
//  - a refused request gets one of the statuses request.h lists, with its
//    reason, and appendParseError answers it with exactly one response of
//    the request's opcode and opaque.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/protocol/frame_info.h"
#include "server/protocol/packet.h"
#include "server/protocol/packet_reader.h"
#include "server/protocol/request.h"
#include "server/protocol/request_encoder.h"
#include "server/protocol/response_encoder.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace protocol = syncwrite::server::protocol;
namespace durability = syncwrite::durability;

// The explicit timeout of `requirements` in ms, nullopt for the bucket's default.
std::optional<uint16_t> timeoutMillis(const durability::Requirements& requirements) {
  if (requirements.timeout.isBucketDefault()) return std::nullopt;
  const syncwrite::clock::TimePoint zero{};
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      requirements.timeout.deadline(zero, std::chrono::milliseconds(0)) - zero);
  return static_cast<uint16_t>(ms.count());
}

// Frame by frame: the re-encoding of a well-formed section is the section.
void checkFramesReencode(std::string_view section) {
  protocol::FrameInfoReader frames(section);
  std::string again;
  while (auto frame = frames.next()) protocol::appendFrameInfo(again, frame->id, frame->data);
  if (!frames.malformed()) FUZZ_CHECK(again == section, "frames re-encode to other bytes");
}

std::string encode(const protocol::Request& r) {
  protocol::RequestFields fields;
  fields.opcode = r.opcode;
  fields.opaque = r.opaque;
  fields.vbucket = r.vbucket;
  fields.cas = r.cas;
  fields.datatype = r.datatype;
  if (r.durability) {
    fields.durability = protocol::DurabilitySpec{r.durability->level, timeoutMillis(*r.durability)};
  }
  fields.extras = r.extras;
  fields.key = r.key;
  fields.value = r.value;
  std::string out;
  protocol::appendRequest(out, fields);
  return out;
}

void checkSame(const protocol::Request& a, const protocol::Request& b) {
  FUZZ_CHECK(a.opcode == b.opcode && a.opaque == b.opaque && a.vbucket == b.vbucket &&
                 a.cas == b.cas && a.datatype == b.datatype,
             "header fields changed");
  FUZZ_CHECK(a.extras == b.extras && a.key == b.key && a.value == b.value, "sections changed");
  FUZZ_CHECK(a.durability == b.durability, "durability requirement changed");
  FUZZ_CHECK(a.flags == b.flags && a.expiry == b.expiry && a.param_type == b.param_type &&
                 a.vbucket_state == b.vbucket_state && a.dcp_flags == b.dcp_flags &&
                 a.prepared_seqno == b.prepared_seqno &&
                 a.vbucket_state_filter == b.vbucket_state_filter && a.delta == b.delta &&
                 a.initial == b.initial,
             "decoded extras changed");
}

// The packet as PacketReader frames it: split, or only framed when the
// sections do not fit the body.
protocol::Packet frame(std::string_view bytes) {
  if (auto packet = protocol::splitPacket(bytes)) return *packet;
  protocol::Packet packet;
  packet.header = protocol::decodeHeader(bytes);
  packet.bytes = bytes;
  return packet;
}

void checkRefusal(const protocol::ParseResult& parsed, const protocol::Header& header) {
  FUZZ_CHECK(parsed.status == protocol::Status::kUnknownCommand ||
                 parsed.status == protocol::Status::kEinval ||
                 parsed.status == protocol::Status::kDurabilityInvalidLevel,
             "a status request.h does not list");
  FUZZ_CHECK(!parsed.message.empty(), "a refusal without its reason");
  FUZZ_CHECK(parsed.request.opcode == header.opcode && parsed.request.opaque == header.opaque,
             "a refusal lost the opcode or opaque");
  std::string answer;
  protocol::appendParseError(answer, parsed, /*json_datatype=*/true);
  protocol::PacketReader reader(protocol::PacketReader::Direction::kResponses);
  reader.feed(answer);
  const auto next = reader.next();
  FUZZ_CHECK(next.result == protocol::PacketReader::Result::kPacket, "the answer is no packet");
  FUZZ_CHECK(next.header.opcode == header.opcode && next.header.opaque == header.opaque &&
                 next.header.status() == parsed.status,
             "the answer names another request or status");
  FUZZ_CHECK(reader.buffered() == 0, "more than one answer");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < protocol::kHeaderSize) return 0;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto body = static_cast<uint32_t>(size - protocol::kHeaderSize);
  for (int i = 0; i < 4; ++i) bytes[8 + i] = static_cast<char>(body >> (24 - 8 * i));
  const protocol::Packet packet = frame(bytes);
  if (!packet.header.isRequest()) return 0;  // PacketReader(kRequests) never passes these on

  checkFramesReencode(packet.framing_extras);
  const protocol::ParseResult parsed = protocol::parseRequest(packet);
  if (!parsed.ok()) {
    checkRefusal(parsed, packet.header);
    return 0;
  }
  const std::string again = encode(parsed.request);
  const protocol::ParseResult reparsed = protocol::parseRequest(frame(again));
  FUZZ_CHECK(reparsed.ok(), "a re-encoded request is refused");
  checkSame(parsed.request, reparsed.request);

  std::string canonical_frames;
  if (parsed.request.durability) {
    protocol::appendDurabilityFrame(canonical_frames, parsed.request.durability->level,
                                    timeoutMillis(*parsed.request.durability));
  }
  const bool alt = packet.header.magic == 0x08;
  if (packet.framing_extras == canonical_frames && alt == !canonical_frames.empty()) {
    FUZZ_CHECK(again == bytes, "a canonical request re-encodes to other bytes");
  }
  return 0;
}
