// syncwrite-cli: one command against a syncwrite-server (or any server that
// speaks the memcached binary protocol subset in docs/protocol.md).
#include <iostream>
#include <string>
#include <vector>

#include "server/cli/cli_args.h"
#include "server/cli/cli_outcome.h"
#include "server/cli/cli_run.h"

int main(int argc, char** argv) {
  using namespace syncwrite::server::cli;
  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<CliArgs> parsed = parseArgs(args);
  if (!parsed.ok()) {
    std::cerr << "syncwrite-cli: " << parsed.status().message() << "\n" << usage();
    return kExitUsage;
  }
  return run(*parsed, std::cout, std::cerr);
}
