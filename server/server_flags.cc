#include "server/server_flags.h"

#include <absl/flags/flag.h>
#include <absl/strings/str_cat.h>

#include "server/command_line.h"

ABSL_FLAG(std::string, config, "",
          "JSON configuration file; empty: the embedded one (bucket \"default\", 1024 active "
          "vbuckets, event-driven timeouts, one simulated replica)");
ABSL_FLAG(std::string, host, "127.0.0.1", "address to listen on");
ABSL_FLAG(uint16_t, port, 11210, "port to listen on, 0..65535; 0 for an ephemeral one");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once listening");
ABSL_FLAG(std::string, node, "",
          "this process's node name (replaces the configuration's node_name; in a cluster, one "
          "of its nodes)");

namespace syncwrite::server {
namespace {

// This file, whose flags are syncwrite-server's (see parseFlags).
constexpr char kFlagsFile[] = "server/server_flags.cc";

}  // namespace

std::string usage() {
  return flagsHelp(
      "usage: syncwrite-server [--config FILE] [--node NAME] [--host H] [--port N] "
      "[--port-file PATH]\n",
      kFlagsFile);
}

absl::StatusOr<ServerOptions> parseOptions(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> line = parseFlags(args, kFlagsFile);
  if (!line.ok()) return line.status();
  if (!line->positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", line->positional.front(), "'"));
  }
  ServerOptions options;
  options.help = line->help;
  options.host = absl::GetFlag(FLAGS_host);
  if (options.host.empty()) return absl::InvalidArgumentError("--host needs a non-empty value");
  options.port = absl::GetFlag(FLAGS_port);
  if (std::string config = absl::GetFlag(FLAGS_config); !config.empty()) {
    options.config_path = std::move(config);
  }
  if (std::string port_file = absl::GetFlag(FLAGS_port_file); !port_file.empty()) {
    options.port_file = std::move(port_file);
  }
  options.node = absl::GetFlag(FLAGS_node);
  return options;
}

}  // namespace syncwrite::server
