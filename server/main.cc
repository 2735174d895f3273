// syncwrite-server: see server/README.md and server.h.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "server/log.h"
#include "server/server.h"
#include "server/server_config.h"
#include "server/server_flags.h"

namespace {

// Whether this build must tear everything down at exit: a sanitizer's leak
// and race checks look at the teardown, and a debug build is where valgrind
// and heaptrack are run.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(NDEBUG)
constexpr bool kFullTeardown = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kFullTeardown = true;
#else
constexpr bool kFullTeardown = false;
#endif
#else
constexpr bool kFullTeardown = false;
#endif

}  // namespace

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

  auto config = options->config_path ? loadServerConfigFile(*options->config_path, options->node)
                                     : loadServerConfigText(kDefaultConfigJson, options->node);
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
  if (!kFullTeardown) {
    // run() has answered every client and joined the I/O threads: what is
    // left is memory, which the kernel takes back at once. Freeing it item
    // by item took 0.4-0.7 s of a SIGTERM's exit with 300k SyncWrites
    // pending (600k log entries; bench/timeout_storm, issue 23).
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}
