// FUZZ_CHECK: how a fuzz target reports a broken property. It prints the
// condition, where, and a note, then aborts: libFuzzer saves the input as a
// crash, and the replay build (tests/fuzz/replay_main.cc) fails its ctest.
// Unlike assert(), it is never compiled out.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace syncwrite::fuzz {

[[noreturn]] inline void fail(const char* condition, const char* file, int line,
                              std::string_view note) {
  std::fprintf(stderr, "%s:%d: property broken: %s (%.*s)\n", file, line, condition,
               static_cast<int>(note.size()), note.data());
  std::abort();
}

}  // namespace syncwrite::fuzz

#define FUZZ_CHECK(condition, note) \
  ((condition) ? void(0) : ::syncwrite::fuzz::fail(#condition, __FILE__, __LINE__, (note)))
