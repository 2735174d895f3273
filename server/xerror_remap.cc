#include "server/xerror_remap.h"

#include <cassert>
#include <optional>

#include "server/protocol/byte_order.h"
#include "server/protocol/packet.h"
#include "server/protocol/status.h"

namespace syncwrite::server {

bool remapForClientWithoutXerror(std::string& out, size_t from) {
  constexpr size_t kStatusOffset = 6;
  constexpr size_t kBodyLengthOffset = 8;
  for (size_t at = from; at < out.size();) {
    assert(out.size() - at >= protocol::kHeaderSize);
    const std::string_view header(out.data() + at, protocol::kHeaderSize);
    const auto status =
        static_cast<protocol::Status>(protocol::wire::load16(header, kStatusOffset));
    const std::optional<protocol::Status> told = protocol::statusWithoutXerror(status);
    if (!told) {
      out.resize(from);
      return false;
    }
    if (*told != status) {
      const auto value = static_cast<uint16_t>(*told);
      out[at + kStatusOffset] = static_cast<char>(value >> 8);
      out[at + kStatusOffset + 1] = static_cast<char>(value & 0xff);
    }
    at += protocol::kHeaderSize + protocol::wire::load32(header, kBodyLengthOffset);
  }
  return true;
}

}  // namespace syncwrite::server
