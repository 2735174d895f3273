#include "subdoc/crc32c.h"

#include <boost/crc.hpp>

namespace syncwrite::subdoc {

uint32_t crc32c(std::string_view bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

}  // namespace syncwrite::subdoc
