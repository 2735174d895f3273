#include "server/protocol/vbucket_hash.h"

#include <boost/crc.hpp>

namespace syncwrite::server::protocol {

uint16_t vbucketOfKey(std::string_view key, uint32_t num_vbuckets) noexcept {
  boost::crc_32_type crc;  // IEEE 802.3 CRC-32, the same as zlib's crc32()
  crc.process_bytes(key.data(), key.size());
  const uint32_t hash = (crc.checksum() >> 16) & 0x7fff;
  return static_cast<uint16_t>(hash % (num_vbuckets == 0 ? 1 : num_vbuckets));
}

}  // namespace syncwrite::server::protocol
