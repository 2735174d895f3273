// Flexible framing extras (magic 0x08): the FrameInfo list that precedes the
// extras of an alternative request.
//
// Encoding (couchbase/kv_engine docs/BinaryProtocol.md, "Request header with
// flexible framing extras"): each FrameInfo starts with one byte, high nibble
// = object id, low nibble = length. An id nibble of 15 is an escape: the id is
// 15 + the next byte. A length nibble of 15 is an escape too: the length is
// 15 + the byte after any id escape byte. Then `length` bytes of data.
//
// Frame ids syncwrite knows: 0 reorder (length 0; accepted and ignored —
// responses stay in order), 1 durability requirement, 2 DCP stream id, 3
// OpenTracing context. parseRequest decides which are allowed where.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "durability/level.h"

namespace syncwrite::server::protocol {

enum class FrameId : uint16_t {
  kReorder = 0,
  kDurabilityRequirement = 1,
  kDcpStreamId = 2,
  kOpenTracingContext = 3,
};

struct FrameInfo {
  uint16_t id = 0;  // 0..270
  std::string_view data;
};

// Iterates over the frames of a framing-extras section.
//   FrameInfoReader frames(packet.framing_extras);
//   while (auto frame = frames.next()) { ... }
//   if (frames.malformed()) -> Einval
class FrameInfoReader {
 public:
  explicit FrameInfoReader(std::string_view section) noexcept : rest_(section) {}

  // The next frame; nullopt at the end of the section or when the rest is
  // malformed (an escape byte or the data runs past the section).
  std::optional<FrameInfo> next() noexcept;

  // True when next() stopped on malformed bytes rather than the end.
  bool malformed() const noexcept { return malformed_; }

 private:
  std::string_view rest_;
  bool malformed_ = false;
};

// Appends one FrameInfo (escaping id and length as needed) to `out`.
// Requires: id <= 270, data.size() <= 270.
void appendFrameInfo(std::string& out, uint16_t id, std::string_view data);

// Appends a durability requirement frame: id 1, the level byte, and the
// 2-byte big-endian timeout when given. Any level and timeout are encoded as
// asked (tests send invalid ones on purpose).
void appendDurabilityFrame(std::string& out, durability::Level level,
                           std::optional<uint16_t> timeout_ms = std::nullopt);

}  // namespace syncwrite::server::protocol
