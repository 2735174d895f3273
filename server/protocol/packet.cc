#include "server/protocol/packet.h"

#include <cassert>

#include "server/protocol/byte_order.h"

namespace syncwrite::server::protocol {

namespace {
bool usesAltLayout(uint8_t magic) noexcept {
  return magic == static_cast<uint8_t>(Magic::kAltClientRequest) ||
         magic == static_cast<uint8_t>(Magic::kAltClientResponse);
}
}  // namespace

Header decodeHeader(std::string_view bytes) noexcept {
  assert(bytes.size() >= kHeaderSize);
  Header h;
  h.magic = static_cast<uint8_t>(bytes[0]);
  h.opcode = static_cast<Opcode>(static_cast<uint8_t>(bytes[1]));
  if (usesAltLayout(h.magic)) {
    h.framing_extras_length = static_cast<uint8_t>(bytes[2]);
    h.key_length = static_cast<uint8_t>(bytes[3]);
  } else {
    h.key_length = wire::load16(bytes, 2);
  }
  h.extras_length = static_cast<uint8_t>(bytes[4]);
  h.datatype = static_cast<uint8_t>(bytes[5]);
  h.vbucket_or_status = wire::load16(bytes, 6);
  h.body_length = wire::load32(bytes, 8);
  h.opaque = wire::load32(bytes, 12);
  h.cas = wire::load64(bytes, 16);
  return h;
}

void appendHeader(std::string& out, const Header& h) {
  wire::append8(out, h.magic);
  wire::append8(out, static_cast<uint8_t>(h.opcode));
  if (usesAltLayout(h.magic)) {
    assert(h.key_length <= 0xff);
    wire::append8(out, h.framing_extras_length);
    wire::append8(out, static_cast<uint8_t>(h.key_length));
  } else {
    wire::append16(out, h.key_length);
  }
  wire::append8(out, h.extras_length);
  wire::append8(out, h.datatype);
  wire::append16(out, h.vbucket_or_status);
  wire::append32(out, h.body_length);
  wire::append32(out, h.opaque);
  wire::append64(out, h.cas);
}

std::optional<Packet> splitPacket(std::string_view bytes) noexcept {
  if (bytes.size() < kHeaderSize) return std::nullopt;
  Packet p;
  p.header = decodeHeader(bytes);
  if (bytes.size() - kHeaderSize != p.header.body_length || !p.header.sectionsFit()) {
    return std::nullopt;
  }
  p.bytes = bytes;
  std::string_view body = bytes.substr(kHeaderSize);
  p.framing_extras = body.substr(0, p.header.framing_extras_length);
  body.remove_prefix(p.header.framing_extras_length);
  p.extras = body.substr(0, p.header.extras_length);
  body.remove_prefix(p.header.extras_length);
  p.key = body.substr(0, p.header.key_length);
  body.remove_prefix(p.header.key_length);
  p.value = body;
  return p;
}

}  // namespace syncwrite::server::protocol
