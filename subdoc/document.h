// The stored document a sub-document request reads, as its caller passes it:
// the value bytes (xattr section and body, not compressed) and datatype, and
// whether it is a tombstone. The library never reads storage itself.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncwrite::subdoc {

struct Document {
  std::string_view value;  // requires: datatype without datatype::kSnappy
  uint8_t datatype = 0;
  bool deleted = false;
};

}  // namespace syncwrite::subdoc
