// What syncwrite-cli prints and returns for each outcome.
//
// Exit status: 0 success, 1 the server answered an error, 2 usage error,
// 3 no answer (cannot connect, connection lost, timed out).
#pragma once

#include <string>

#include <absl/status/status.h>

#include "server/cli/cli_args.h"
#include "server/protocol/response.h"

namespace syncwrite::server::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServerError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoAnswer = 3;

// One line for a non-success answer to `args`' command, e.g.
// "ambiguous: durability timeout after 500 ms", "not found",
// "sync write in progress on KEY", "not my vbucket (vbucket 115)".
// The server's error context is appended where it adds something.
std::string describeFailure(const CliArgs& args, const protocol::Response& response);

// One line for a transport error: the client's message, which already reads
// "cannot connect to HOST:PORT: ..." or "timed out after N ms ...".
std::string describeTransportError(const absl::Status& status);

}  // namespace syncwrite::server::cli
