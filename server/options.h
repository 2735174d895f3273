// ServerOptions: where syncwrite-server listens and what it reads at start.
//
// Filled from the command line by parseOptions (server/server_flags.h), or by
// an embedder directly; Server::run takes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace syncwrite::server {

struct ServerOptions {
  std::optional<std::string> config_path;  // none: the embedded default configuration
  std::string host = "127.0.0.1";
  uint16_t port = 11210;  // 0: an ephemeral port
  // A file the server writes the bound port into once it is listening (so a
  // test or a harness waits for the file instead of sleeping).
  std::optional<std::string> port_file;
  std::string node;   // --node: replaces node_name when not empty
  bool help = false;  // --help / -h: print usage and exit 0
};

}  // namespace syncwrite::server
