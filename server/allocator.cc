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

}  // namespace

std::string allocatorName() {
  // A process's malloc cannot change once it runs: one lookup serves every
  // STAT.
  static const std::string name = lookUpAllocator();
  return name;
}

}  // namespace syncwrite::server
