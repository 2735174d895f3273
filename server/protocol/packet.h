// Packet: one MCBP packet (24-byte header and body), decoded header fields plus
// views of the body sections.
//
// Layout (couchbase/kv_engine docs/BinaryProtocol.md, "Packet Structure"), all
// integers big-endian:
//
//   byte 0      magic            0x80 / 0x81: bytes 2-3 key length
//   byte 1      opcode           0x08 / 0x18: byte 2 framing extras length,
//   bytes 2-3   key length                    byte 3 key length
//   byte 4      extras length
//   byte 5      datatype
//   bytes 6-7   vbucket (request) / status (response)
//   bytes 8-11  total body length = framing extras + extras + key + value
//   bytes 12-15 opaque (echoed back in the response)
//   bytes 16-23 cas
//   body: framing extras, extras, key, value — in that order.
//
// A Packet's string_views point into the buffer it was decoded from
// (PacketReader's, usually) and are valid until that buffer changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "server/protocol/opcode.h"
#include "server/protocol/status.h"

namespace syncwrite::server::protocol {

inline constexpr size_t kHeaderSize = 24;

struct Header {
  uint8_t magic = 0;
  Opcode opcode = Opcode::kGet;
  uint8_t framing_extras_length = 0;  // always 0 for magic 0x80 / 0x81
  uint16_t key_length = 0;
  uint8_t extras_length = 0;
  uint8_t datatype = 0;
  uint16_t vbucket_or_status = 0;  // vbucket in requests, status in responses
  uint32_t body_length = 0;
  uint32_t opaque = 0;
  uint64_t cas = 0;

  bool isRequest() const noexcept {
    return magic == static_cast<uint8_t>(Magic::kClientRequest) ||
           magic == static_cast<uint8_t>(Magic::kAltClientRequest);
  }
  bool isResponse() const noexcept {
    return magic == static_cast<uint8_t>(Magic::kClientResponse) ||
           magic == static_cast<uint8_t>(Magic::kAltClientResponse);
  }
  uint16_t vbucket() const noexcept { return vbucket_or_status; }
  Status status() const noexcept { return static_cast<Status>(vbucket_or_status); }
  // True when the section lengths fit in the body length.
  bool sectionsFit() const noexcept {
    return uint64_t{framing_extras_length} + extras_length + key_length <= body_length;
  }
};

// Decodes the first kHeaderSize bytes of `bytes` (which must hold at least
// that many). Any magic is decoded; byte 2/3 are read per the magic (0x08 and
// 0x18 use the alternative layout). Never fails.
Header decodeHeader(std::string_view bytes) noexcept;

// Appends `header` in wire layout (24 bytes) to `out`. The layout follows
// header.magic. Requires: for magic 0x08/0x18, key_length <= 255.
void appendHeader(std::string& out, const Header& header);

struct Packet {
  Header header;
  std::string_view framing_extras;
  std::string_view extras;
  std::string_view key;
  std::string_view value;
  // The whole packet, header included.
  std::string_view bytes;
};

// Splits a complete packet (header + exactly body_length bytes) into its
// sections. Returns nullopt when `bytes` is not header + body_length long, or
// when framing extras + extras + key exceed the body length.
std::optional<Packet> splitPacket(std::string_view bytes) noexcept;

}  // namespace syncwrite::server::protocol
