// Big-endian (network byte order) loads and stores used by the codec.
// Internal to server/protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace syncwrite::server::protocol::wire {

// Requires: bytes.size() >= offset + sizeof the result.
inline uint16_t load16(std::string_view bytes, size_t offset = 0) noexcept {
  return static_cast<uint16_t>((uint16_t{static_cast<uint8_t>(bytes[offset])} << 8) |
                               static_cast<uint8_t>(bytes[offset + 1]));
}
inline uint32_t load32(std::string_view bytes, size_t offset = 0) noexcept {
  return (uint32_t{load16(bytes, offset)} << 16) | load16(bytes, offset + 2);
}
inline uint64_t load64(std::string_view bytes, size_t offset = 0) noexcept {
  return (uint64_t{load32(bytes, offset)} << 32) | load32(bytes, offset + 4);
}

inline void append8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }
inline void append16(std::string& out, uint16_t v) {
  const char b[2] = {static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, sizeof b);
}
inline void append32(std::string& out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  out.append(b, sizeof b);
}
inline void append64(std::string& out, uint64_t v) {
  append32(out, static_cast<uint32_t>(v >> 32));
  append32(out, static_cast<uint32_t>(v));
}
// Writes v big-endian into the 4 bytes at p.
inline void store32(char* p, uint32_t v) noexcept {
  for (int i = 3; i >= 0; --i) {
    p[i] = static_cast<char>(v);
    v >>= 8;
  }
}
// Writes v big-endian into the 8 bytes at p.
inline void store64(char* p, uint64_t v) noexcept {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v);
    v >>= 8;
  }
}

}  // namespace syncwrite::server::protocol::wire
