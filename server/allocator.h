#pragma once

// Which malloc the running process uses, for the general stats ("allocator").
// syncwrite-server links gperftools' tcmalloc unless the build says
// SYNCWRITE_MALLOC=system (CMakeLists.txt; the sanitizer presets do).

#include <string>

namespace syncwrite::server {

// "tcmalloc (gperftools 2.10)" when tcmalloc is loaded in this process,
// whether linked or preloaded; "system" otherwise (glibc's malloc, or a
// sanitizer's). Asked of the process at run time, not of the build, at the
// first call; later calls return the same answer.
std::string allocatorName();

}  // namespace syncwrite::server
