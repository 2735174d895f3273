#include "server/allocator.h"

#include <dlfcn.h>

#include <absl/strings/str_cat.h>

namespace syncwrite::server {

namespace {

std::string lookUpAllocator() {
  // gperftools' tcmalloc exports tc_version() (gperftools/tcmalloc.h); the
  // lookup finds it only when the library is loaded.
  using TcVersion = const char* (*)(int* major, int* minor, const char** patch);
  void* const symbol = ::dlsym(RTLD_DEFAULT, "tc_version");
  if (symbol == nullptr) return "system";
  int major = 0;
  int minor = 0;
  const char* patch = nullptr;
  const char* version = reinterpret_cast<TcVersion>(symbol)(&major, &minor, &patch);
  return absl::StrCat("tcmalloc (", version != nullptr ? version : "gperftools", ")");
}

// gperftools' C entry point for MallocExtension::GetNumericProperty
// (gperftools/malloc_extension_c.h), or null when tcmalloc is not loaded.
using GetNumericProperty = int (*)(const char* property, size_t* value);
GetNumericProperty lookUpGetNumericProperty() {
  return reinterpret_cast<GetNumericProperty>(
      ::dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
}

// Every byte count gperftools 2.10 documents for GetNumericProperty
// (gperftools/malloc_extension.h).
constexpr const char* kProperties[] = {
    "generic.current_allocated_bytes",
    "generic.heap_size",
    "generic.total_physical_bytes",
    "tcmalloc.pageheap_free_bytes",
    "tcmalloc.pageheap_unmapped_bytes",
    "tcmalloc.central_cache_free_bytes",
    "tcmalloc.transfer_cache_free_bytes",
    "tcmalloc.thread_cache_free_bytes",
    "tcmalloc.current_total_thread_cache_bytes",
    "tcmalloc.max_total_thread_cache_bytes",
};

}  // namespace

std::vector<std::pair<std::string, size_t>> allocatorProperties() {
  static const GetNumericProperty get = lookUpGetNumericProperty();
  std::vector<std::pair<std::string, size_t>> out;
  if (get == nullptr) return out;
  for (const char* name : kProperties) {
    size_t value = 0;
    if (get(name, &value) != 0) out.emplace_back(name, value);
  }
  return out;
}

std::string allocatorName() {
  // A process's malloc cannot change once it runs: one lookup serves every
  // STAT.
  static const std::string name = lookUpAllocator();
  return name;
}

}  // namespace syncwrite::server
