#pragma once

// The version syncwrite-server reports: the project's version, set once in
// the top-level CMakeLists.txt (project(syncwrite VERSION …)).

#include <string_view>

namespace syncwrite::server {

// The bare version, major.minor.patch ("1.1.0"): what VERSION answers, as
// kv_engine answers its bare product version. Its major is never 0:
// libmemcached (src/libmemcached/response.cc) refuses a VERSION answer whose
// major is 0, and memcstat then fails.
std::string_view serverVersion();

// The server's name and version ("syncwrite-server 1.1.0"), in the general stats.
std::string_view serverNameAndVersion();

}  // namespace syncwrite::server
