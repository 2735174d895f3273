// The vbucket of a key, computed as Couchbase clients do: the CRC-32
// (IEEE 802.3, as zlib's crc32) of the key bytes, (crc >> 16) & 0x7fff,
// modulo the number of vbuckets. (Clients mask with vbuckets - 1, which is
// the same for the power-of-two counts Couchbase uses.)
#pragma once

#include <cstdint>
#include <string_view>

namespace syncwrite::server::protocol {

inline constexpr uint32_t kDefaultVbuckets = 1024;

// Requires: num_vbuckets >= 1. Cost: O(key.size()).
uint16_t vbucketOfKey(std::string_view key, uint32_t num_vbuckets = kDefaultVbuckets) noexcept;

}  // namespace syncwrite::server::protocol
