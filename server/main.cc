// syncwrite-server: see server/README.md and server.h.
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "server/log.h"
#include "server/server.h"
#include "server/server_config.h"
#include "server/server_flags.h"

int main(int argc, char** argv) {
  using namespace syncwrite::server;
  // Writes to a socket the peer closed must fail with EPIPE, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);

  auto options = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.ok()) {
    std::cerr << "syncwrite-server: " << options.status().message() << "\n" << usage();
    return 2;
  }
  if (options->help) {
    std::cout << usage();
    return 0;
  }

  auto config = options->config_path ? loadServerConfigFile(*options->config_path)
                                     : loadServerConfigText(kDefaultConfigJson);
  if (!config.ok()) {
    logLine(std::string("configuration refused: ") + std::string(config.status().message()));
    return 1;
  }
  auto server = Server::create(std::move(*config));
  if (!server.ok()) {
    logLine(std::string("cannot start: ") + std::string(server.status().message()));
    return 1;
  }
  if (auto status = (*server)->run(*options); !status.ok()) {
    logLine(std::string("cannot start: ") + std::string(status.message()));
    return 1;
  }
  return 0;
}
