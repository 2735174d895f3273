#include "server/cli/cli_failover.h"

#include <fstream>
#include <map>
#include <sstream>

#include <absl/strings/str_cat.h>
#include <nlohmann/json.hpp>

#include "server/cli/cli_outcome.h"
#include "server/cli/failover_plan.h"
#include "server/cluster_config.h"
#include "server/protocol/client.h"

namespace syncwrite::server::cli {
namespace {

absl::StatusOr<ClusterSpec> readCluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the cluster file '", path, "'"));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, false);
  if (!config.is_object() || !config.contains("cluster")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a JSON object with a \"cluster\" entry"));
  }
  absl::StatusOr<ClusterSpec> spec = parseClusterSpec(config["cluster"]);
  if (!spec.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", std::string(spec.status().message())));
  }
  return spec;
}

}  // namespace

int runFailover(const CliArgs& args, std::ostream& out, std::ostream& err,
                std::chrono::milliseconds wait) {
  const std::string& failed = args.key;
  absl::StatusOr<ClusterSpec> cluster = readCluster(args.cluster_file);
  if (!cluster.ok()) {
    err << cluster.status().message() << "\n";
    return kExitUsage;
  }
  if (cluster->find(failed) == nullptr) {
    err << "failover: '" << failed << "' is not a node of " << args.cluster_file << "\n";
    return kExitUsage;
  }
  const protocol::ClientOptions options{
      .timeout = wait, .user = args.user, .password = args.password};
  std::map<std::string, protocol::Client> clients;
  ClusterReports reports;
  for (const ClusterNode& node : cluster->nodes) {
    if (node.name == failed) continue;
    const auto unreachable = [&](const absl::Status& status) {
      err << "failover: cannot query node '" << node.name << "': " << status.message()
          << " (every node but '" << failed << "' must answer; nothing was changed)\n";
      return kExitNoAnswer;
    };
    absl::StatusOr<uint16_t> port = resolvePort(node);
    if (!port.ok()) return unreachable(port.status());
    absl::StatusOr<protocol::Client> client = protocol::Client::connectToBucket(
        node.host, *port, args.bucket, "syncwrite-cli failover", options);
    if (!client.ok()) return unreachable(client.status());
    absl::StatusOr<protocol::StatsReply> stats = client->stats("vbucket-details");
    if (!stats.ok()) return unreachable(stats.status());
    if (!stats->ok()) {
      return unreachable(absl::UnavailableError(
          absl::StrCat("STAT vbucket-details answered ",
                       std::string(protocol::toString(stats->status)), " ", stats->error_context)));
    }
    absl::StatusOr<std::map<uint16_t, VbucketReport>> parsed = parseVbucketDetails(stats->stats);
    if (!parsed.ok()) return unreachable(parsed.status());
    reports[node.name] = std::move(*parsed);
    clients.emplace(node.name, std::move(*client));
  }
  absl::StatusOr<FailoverPlan> plan = planFailover(failed, reports);
  if (!plan.ok()) {
    err << "failover: " << plan.status().message() << "\n";
    return kExitServerError;
  }
  for (const VbucketChange& change : plan->changes) {
    absl::StatusOr<protocol::Response> answer =
        clients.at(change.node)
            .setVbucketState(change.vbucket, change.state,
                             absl::StrCat("{\"topology\": ", change.topology, "}"));
    const std::string what = absl::StrCat("SET_VBUCKET ", change.vbucket, " ",
                                          std::string(protocol::toString(change.state)), " ",
                                          change.topology, " on node '", change.node, "'");
    if (!answer.ok()) {
      err << "failover: " << what << ": " << answer.status().message() << "\n";
      return kExitNoAnswer;
    }
    if (!answer->ok()) {
      err << "failover: " << what << " refused: " << protocol::toString(answer->status) << " "
          << answer->errorContext() << "\n";
      return kExitServerError;
    }
  }
  for (const std::string& line : plan->lines) out << line << "\n";
  out << "failed over node '" << failed << "': " << plan->lines.size()
      << " vbucket chain(s) named it\n";
  return kExitOk;
}

}  // namespace syncwrite::server::cli
