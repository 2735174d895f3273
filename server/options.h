// ServerOptions: the command line of syncwrite-server.
//
//   syncwrite-server [--config FILE] [--host H] [--port N] [--port-file PATH]
//
// Each option takes its value as the next argument or after '=' ("--port=0").
// --port 0 asks the kernel for an ephemeral port; --port-file names a file the
// server writes the bound port into once it is listening (so a test or a
// harness waits for the file instead of sleeping). Parsing is pure: it never
// exits or prints, so main() decides what a refusal does (exit status 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

namespace syncwrite::server {

struct ServerOptions {
  std::optional<std::string> config_path;  // none: the embedded default configuration
  std::string host = "127.0.0.1";
  uint16_t port = 11210;
  std::optional<std::string> port_file;
  bool help = false;  // --help / -h: print usage and exit 0
};

// Parses `args` (argv without the program name). InvalidArgument naming the
// option and the problem for: an unknown option, a missing value, a port that
// is not a decimal number in 0..65535, an empty host or path, a positional
// argument.
absl::StatusOr<ServerOptions> parseOptions(const std::vector<std::string>& args);

// The usage text, one option a line.
std::string usage();

}  // namespace syncwrite::server
