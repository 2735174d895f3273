#include "server/protocol/frame_info.h"

#include <cassert>

#include "server/protocol/byte_order.h"

namespace syncwrite::server::protocol {

namespace {
constexpr uint8_t kEscape = 0x0f;
}  // namespace

std::optional<FrameInfo> FrameInfoReader::next() noexcept {
  if (rest_.empty() || malformed_) return std::nullopt;
  const uint8_t first = static_cast<uint8_t>(rest_[0]);
  size_t pos = 1;
  uint16_t id = first >> 4;
  size_t length = first & 0x0f;
  if (id == kEscape) {
    if (pos >= rest_.size()) return malformed_ = true, std::nullopt;
    id = static_cast<uint16_t>(kEscape + static_cast<uint8_t>(rest_[pos++]));
  }
  if (length == kEscape) {
    if (pos >= rest_.size()) return malformed_ = true, std::nullopt;
    length = kEscape + static_cast<uint8_t>(rest_[pos++]);
  }
  if (rest_.size() - pos < length) return malformed_ = true, std::nullopt;
  FrameInfo frame{id, rest_.substr(pos, length)};
  rest_.remove_prefix(pos + length);
  return frame;
}

void appendFrameInfo(std::string& out, uint16_t id, std::string_view data) {
  assert(id <= kEscape + 0xff && data.size() <= kEscape + 0xffu);
  const uint8_t id_nibble = id < kEscape ? static_cast<uint8_t>(id) : kEscape;
  const uint8_t len_nibble = data.size() < kEscape ? static_cast<uint8_t>(data.size()) : kEscape;
  wire::append8(out, static_cast<uint8_t>(id_nibble << 4 | len_nibble));
  if (id_nibble == kEscape) wire::append8(out, static_cast<uint8_t>(id - kEscape));
  if (len_nibble == kEscape) wire::append8(out, static_cast<uint8_t>(data.size() - kEscape));
  out.append(data);
}

void appendDurabilityFrame(std::string& out, durability::Level level,
                           std::optional<uint16_t> timeout_ms) {
  const uint16_t ms = timeout_ms.value_or(0);
  const char data[3] = {static_cast<char>(level), static_cast<char>(ms >> 8),
                        static_cast<char>(ms)};
  appendFrameInfo(out, static_cast<uint16_t>(FrameId::kDurabilityRequirement),
                  std::string_view(data, timeout_ms ? 3 : 1));
}

}  // namespace syncwrite::server::protocol
