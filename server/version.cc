#include "server/version.h"

#ifndef SYNCWRITE_VERSION
#error "SYNCWRITE_VERSION is defined by server/CMakeLists.txt from the project's version"
#endif

namespace syncwrite::server {

std::string_view serverVersion() { return SYNCWRITE_VERSION; }

std::string_view serverNameAndVersion() { return "syncwrite-server " SYNCWRITE_VERSION; }

}  // namespace syncwrite::server
