// Runs one syncwrite-cli command against a server: Client::connectToBucket
// (connect, HELLO, SELECT_BUCKET), then the command. Results go to `out`, failure lines to `err`.
#pragma once

#include <chrono>
#include <ostream>

#include "server/cli/cli_args.h"

namespace syncwrite::server::cli {

// Returns the exit status (see cli_outcome.h). `wait` bounds every exchange
// with the server (the hang guard); durable writes may take up to their
// durability timeout (at most 65.5 s) before they are answered.
int run(const CliArgs& args, std::ostream& out, std::ostream& err,
        std::chrono::milliseconds wait = std::chrono::minutes(2));

}  // namespace syncwrite::server::cli
