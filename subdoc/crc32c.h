// CRC-32C (Castagnoli), the checksum kv_engine reports as a document's
// value_crc32c. Debian 12 packages no CRC-32C library for C++ (no
// libcrc32c-dev; libabsl 20220623 predates absl/crc), so this uses Boost.CRC
// (header-only, already a dependency through base/) with the Castagnoli
// polynomial. Cost: byte-at-a-time table lookup, about 1 ns/byte.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncwrite::subdoc {

uint32_t crc32c(std::string_view bytes);

}  // namespace syncwrite::subdoc
