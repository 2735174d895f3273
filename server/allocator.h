#pragma once

// Which malloc the running process uses, for the general stats ("allocator").
// syncwrite-server links gperftools' tcmalloc unless the build says
// SYNCWRITE_MALLOC=system (CMakeLists.txt; the sanitizer presets do).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace syncwrite::server {

// "tcmalloc (gperftools 2.10)" when tcmalloc is loaded in this process,
// whether linked or preloaded; "system" otherwise (glibc's malloc, or a
// sanitizer's). Asked of the process at run time, not of the build, at the
// first call; later calls return the same answer.
std::string allocatorName();

// The allocator's own figures, in bytes, by gperftools' property names
// (generic.current_allocated_bytes, generic.heap_size and the free bytes
// of each tcmalloc cache: gperftools/malloc_extension.h), read now, when
// tcmalloc is loaded; empty otherwise. For the STAT group "allocator".
std::vector<std::pair<std::string, size_t>> allocatorProperties();

}  // namespace syncwrite::server
