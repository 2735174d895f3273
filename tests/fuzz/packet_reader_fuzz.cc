// Fuzz target: protocol::PacketReader fed one byte stream in pieces.
//
// Input: byte 0 picks the direction (bit 0) and max_packet_size (the rest:
// 0..127 * 64 bytes, small so that kTooBig is reached); byte 1 is n, the
// count of the piece-size bytes that follow (at most 31); each says how long
// a piece is (low 7 bits, 0 counting as 1) and whether it goes in by feed()
// or by prepare() + commit() (high bit). The pieces cycle until the stream,
// the rest of the input, is used up.
//
// Properties:
//  - whatever the split, the reader returns what a plain model of the framing
//    says (below): the same packets, byte for byte, then the same end
//    (kNeedMore with the unread tail buffered, kBadMagic, kBadLengths, or
//    kTooBig with the offending header); an error is sticky;
//  - each packet's sections are its body in order.
// The model, from kv_engine docs/BinaryProtocol.md: at each packet start the
// magic must be of the direction (checked on the first byte alone); a header
// is 24 bytes; bytes 8-11 are the big-endian body length; framing extras
// (byte 2 of the alternative magics 0x08/0x18, whose key length is byte 3;
// else bytes 2-3 are the key length) + extras (byte 4) + key longer than the
// body is an error from the header alone (kv_engine's Header::isValid), and
// so, after that, is a body over max_packet_size.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "server/protocol/packet_reader.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using syncwrite::server::protocol::kHeaderSize;
using syncwrite::server::protocol::Packet;
using syncwrite::server::protocol::PacketReader;
using Result = PacketReader::Result;

struct Expected {
  std::vector<std::string_view> packets;
  Result end = Result::kNeedMore;
  size_t end_at = 0;  // where the unread tail (kNeedMore) or the bad packet starts
};

uint32_t bodyLength(std::string_view header) {
  uint32_t v = 0;
  for (size_t i = 8; i < 12; ++i) v = v << 8 | static_cast<uint8_t>(header[i]);
  return v;
}

Expected model(std::string_view stream, bool requests, size_t max_packet_size) {
  Expected e;
  size_t at = 0;
  while (at < stream.size()) {
    const auto magic = static_cast<uint8_t>(stream[at]);
    const bool ok = requests ? (magic == 0x80 || magic == 0x08) : (magic == 0x81 || magic == 0x18);
    e.end_at = at;
    if (!ok) {
      e.end = Result::kBadMagic;
      return e;
    }
    if (stream.size() - at < kHeaderSize) return e;
    const uint32_t body = bodyLength(stream.substr(at));
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(stream[at + i]); };
    const bool alt = magic == 0x08 || magic == 0x18;
    const uint64_t sections =
        (alt ? uint64_t{byte(2)} + byte(3) : (uint64_t{byte(2)} << 8 | byte(3))) + byte(4);
    if (sections > body) {
      e.end = Result::kBadLengths;
      return e;
    }
    if (body > max_packet_size) {
      e.end = Result::kTooBig;
      return e;
    }
    if (stream.size() - at - kHeaderSize < body) return e;
    e.packets.push_back(stream.substr(at, kHeaderSize + body));
    at += kHeaderSize + body;
  }
  e.end_at = at;
  return e;
}

void checkSections(const Packet& p) {
  FUZZ_CHECK(p.header.sectionsFit(), "a packet whose sections do not fit its body");
  std::string body;
  body.append(p.framing_extras).append(p.extras).append(p.key).append(p.value);
  FUZZ_CHECK(body == p.bytes.substr(kHeaderSize), "sections are not the body in order");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool requests = (data[0] & 1) == 0;
  const size_t max_packet_size = static_cast<size_t>(data[0] >> 1) * 64;
  const size_t n = std::min<size_t>(data[1] & 31, size - 2);
  const std::vector<uint8_t> pieces(data + 2, data + 2 + n);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2 + n, size - 2 - n);

  const Expected expected = model(stream, requests, max_packet_size);
  PacketReader reader(
      requests ? PacketReader::Direction::kRequests : PacketReader::Direction::kResponses,
      max_packet_size);
  size_t fed = 0;
  size_t got = 0;  // packets returned so far
  size_t piece = 0;
  PacketReader::Next last;
  while (true) {
    // Drain: every packet already complete must come out now.
    for (last = reader.next(); last.result == Result::kPacket; last = reader.next()) {
      FUZZ_CHECK(got < expected.packets.size(), "a packet the model does not have");
      FUZZ_CHECK(last.packet.bytes == expected.packets[got], "packet bytes differ from the model");
      checkSections(last.packet);
      ++got;
    }
    if (last.result != Result::kNeedMore || fed == stream.size()) break;
    const uint8_t spec = pieces.empty() ? 0x7f : pieces[piece++ % pieces.size()];
    const size_t len = std::min<size_t>(std::max(spec & 0x7f, 1), stream.size() - fed);
    if (spec & 0x80) {
      auto region = reader.prepare(len);
      FUZZ_CHECK(region.size() >= len, "prepare() gave less than asked");
      std::memcpy(region.data(), stream.data() + fed, len);
      reader.commit(len);
    } else {
      reader.feed(stream.substr(fed, len));
    }
    fed += len;
  }
  FUZZ_CHECK(got == expected.packets.size(), "fewer packets than the model");
  FUZZ_CHECK(last.result == expected.end, "the stream ends differently from the model");
  if (last.result == Result::kNeedMore) {
    FUZZ_CHECK(reader.buffered() == stream.size() - expected.end_at, "wrong unread tail");
  } else {
    // The error is sticky, and kBadLengths and kTooBig report the offending header.
    FUZZ_CHECK(reader.next().result == last.result, "the error did not stick");
    if (last.result != Result::kBadMagic) {
      FUZZ_CHECK(last.header.body_length == bodyLength(stream.substr(expected.end_at)),
                 "the error names another header");
    }
  }
  return 0;
}
