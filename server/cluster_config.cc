#include "server/cluster_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/strip.h>

namespace syncwrite::server {
namespace {

absl::Status invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

}  // namespace

const ClusterNode* ClusterSpec::find(const std::string& name) const {
  for (const ClusterNode& node : nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

std::vector<std::string> ClusterSpec::chain(vbucket::Vbid vbid, size_t num_replicas) const {
  std::vector<std::string> out;
  for (size_t i = 0; i <= num_replicas && i < nodes.size(); ++i) {
    out.push_back(nodes[(vbid + i) % nodes.size()].name);
  }
  return out;
}

absl::StatusOr<ClusterSpec> parseClusterSpec(const nlohmann::json& value) {
  if (!value.is_object()) return invalid("cluster", "must be an object with \"nodes\"");
  ClusterSpec spec;
  for (const auto& [key, v] : value.items()) {
    if (key == "replication_user") {
      if (!v.is_string() || v.get<std::string>().empty()) {
        return invalid("cluster.replication_user", "must be a user's name");
      }
      spec.replication_user = v.get<std::string>();
    } else if (key != "nodes") {
      return invalid("cluster",
                     absl::StrCat("unknown key '", key, "' (expected nodes, replication_user)"));
    }
  }
  if (!value.contains("nodes") || !value["nodes"].is_object() || value["nodes"].empty()) {
    return invalid("cluster.nodes", "must be an object naming at least one node");
  }
  for (const auto& [name, body] : value["nodes"].items()) {
    const std::string at = absl::StrCat("cluster.nodes.", name);
    if (name.empty()) return invalid("cluster.nodes", "a node name must not be empty");
    if (!body.is_object()) return invalid(at, "must be {\"host\": ..., \"port\": N}");
    ClusterNode node;
    node.name = name;
    for (const auto& [key, v] : body.items()) {
      if (key == "host" && v.is_string() && !v.get<std::string>().empty()) {
        node.host = v.get<std::string>();
      } else if (key == "port" && v.is_number_unsigned() && v.get<uint64_t>() >= 1 &&
                 v.get<uint64_t>() <= 65535) {
        node.port = static_cast<uint16_t>(v.get<uint64_t>());
      } else if (key == "port_file" && v.is_string() && !v.get<std::string>().empty()) {
        node.port_file = v.get<std::string>();
      } else if (key == "data_dir" && v.is_string() && !v.get<std::string>().empty()) {
        node.data_dir = v.get<std::string>();
      } else {
        return invalid(at, absl::StrCat("'", key, "': ", v.dump(),
                                        " is not a host name, a port in 1..65535, a port file "
                                        "or a data directory"));
      }
    }
    if (node.host.empty()) return invalid(at, "needs \"host\"");
    if ((node.port == 0) == node.port_file.empty()) {
      return invalid(at, "needs exactly one of \"port\" and \"port_file\"");
    }
    spec.nodes.push_back(std::move(node));
  }
  return spec;
}

absl::StatusOr<uint16_t> resolvePort(const ClusterNode& node) {
  if (node.port != 0) return node.port;
  // Read here rather than with config::readFile, whose error text comes from
  // Abseil's StrError: its cache, in Debian's uninstrumented libabsl, is a
  // data race to ThreadSanitizer when two I/O threads miss a file at once.
  const int fd = ::open(node.port_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("port file ", node.port_file, " of node '", node.name,
                                            "' cannot be opened (errno ", errno, ")"));
  }
  char buffer[32];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  const std::string text(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  uint32_t port = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &port) || port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port file ", node.port_file, " of node '", node.name, "' holds no port"));
  }
  return static_cast<uint16_t>(port);
}

}  // namespace syncwrite::server
