// A main() for a fuzz target built without libFuzzer: runs
// LLVMFuzzerTestOneInput once on every file named on the command line, or in
// a directory named there (not recursively). The target checks its
// properties itself and aborts on a violation, so this passes when every
// input ran. No input at all is a failure: a corpus that went missing must
// not pass silently.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "config/read_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.push_back(arg);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs (give files or directories)\n");
    return 2;
  }
  for (const auto& path : inputs) {
    const auto text = syncwrite::config::readFile(path);
    if (!text.ok()) {
      std::fprintf(stderr, "replay: %s\n", std::string(text.status().message()).c_str());
      return 2;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(text->data()), text->size());
  }
  std::fprintf(stderr, "replay: %zu inputs ran\n", inputs.size());
  return 0;
}
