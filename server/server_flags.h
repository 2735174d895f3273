// The command line of syncwrite-server:
//
//   syncwrite-server [--config FILE] [--host H] [--port N] [--port-file PATH]
//
// Its flags are Abseil flags declared in server_flags.cc, set by parseFlags
// (server/command_line.h, which says the syntax: "--port 0" or "--port=0").
// Parsing never exits or prints, so main() decides what a refusal does (exit
// status 2). Not in the syncwrite::server library: the flags are global.
#pragma once

#include <string>
#include <vector>

#include <absl/status/statusor.h>

#include "server/options.h"

namespace syncwrite::server {

// Parses `args` (argv without the program name) into ServerOptions, starting
// from the defaults every time. InvalidArgument naming the flag and the value
// for: an unknown flag, a missing value, a port that is not a number in
// 0..65535, an empty host, a positional argument. An empty --config or
// --port-file means none. Not thread-safe (the flags are process-global).
absl::StatusOr<ServerOptions> parseOptions(const std::vector<std::string>& args);

// The usage text: a synopsis, then every flag with its default.
std::string usage();

}  // namespace syncwrite::server
