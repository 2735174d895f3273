#include "server/options.h"

#include <charconv>
#include <string_view>

#include <absl/strings/str_cat.h>

namespace syncwrite::server {
namespace {

absl::StatusOr<uint16_t> parsePort(const std::string& text) {
  unsigned value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--port: '", text, "' is not a port number (expected 0..65535)"));
  }
  return static_cast<uint16_t>(value);
}

}  // namespace

std::string usage() {
  return "usage: syncwrite-server [--config FILE] [--host H] [--port N] [--port-file PATH]\n"
         "  --config FILE     JSON configuration (default: one bucket \"default\", 1024 active\n"
         "                    vbuckets, event-driven timeouts, one simulated replica)\n"
         "  --host H          address to listen on (default 127.0.0.1)\n"
         "  --port N          port to listen on, 0 for an ephemeral one (default 11210)\n"
         "  --port-file PATH  write the bound port to PATH once listening\n";
}

absl::StatusOr<ServerOptions> parseOptions(const std::vector<std::string>& args) {
  ServerOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
    }
    std::string name = arg;
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (name != "--config" && name != "--host" && name != "--port" && name != "--port-file") {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", name, "'"));
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      }
      value = args[++i];
    }
    if (name == "--port") {
      auto port = parsePort(*value);
      if (!port.ok()) return port.status();
      options.port = *port;
      continue;
    }
    if (value->empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name, " needs a non-empty value"));
    }
    if (name == "--config") {
      options.config_path = *value;
    } else if (name == "--host") {
      options.host = *value;
    } else {
      options.port_file = *value;
    }
  }
  return options;
}

}  // namespace syncwrite::server
