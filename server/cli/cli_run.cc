#include "server/cli/cli_run.h"

#include <absl/strings/str_cat.h>

#include "server/cli/cli_failover.h"
#include "server/cli/cli_outcome.h"
#include "server/protocol/client.h"

namespace syncwrite::server::cli {

namespace {

using protocol::Client;
using protocol::Response;

std::string casText(uint64_t cas) { return absl::StrCat("0x", absl::Hex(cas)); }

// Prints the success line of `args`' command.
void printSuccess(const CliArgs& args, const Response& response, std::ostream& out) {
  switch (args.command) {
    case Command::kSet:
    case Command::kAdd:
    case Command::kReplace:
    case Command::kDelete: {
      const std::string_view verb = args.command == Command::kDelete ? "deleted" : "stored";
      out << verb << " " << args.key << " (vbucket " << args.vbucketOfKey() << ", cas "
          << casText(response.cas);
      if (args.durability) {
        out << ", durability "
            << (durability::levelFromWire(static_cast<uint8_t>(args.durability->level))
                    ? durability::toString(args.durability->level)
                    : "?");
      }
      out << ")\n";
      return;
    }
    case Command::kGet:
      out << response.value << "\n";
      return;
    case Command::kSetParam:
      out << args.key << " = " << args.value << "\n";
      return;
    case Command::kSetVbucket:
      out << "vbucket " << args.target_vbucket << " is now " << protocol::toString(args.state)
          << "\n";
      return;
    case Command::kVersion:
      out << response.value << "\n";
      return;
    case Command::kStats:
    case Command::kFailover:
    case Command::kHelp:
      return;
  }
}

}  // namespace

int run(const CliArgs& args, std::ostream& out, std::ostream& err, std::chrono::milliseconds wait) {
  if (args.command == Command::kHelp) {
    out << usage();
    return kExitOk;
  }
  if (args.command == Command::kFailover) return runFailover(args, out, err, wait);
  // VERSION needs no bucket.
  // Both arms are views: with a string literal on one side the conditional
  // would build a temporary std::string and the view would dangle.
  const std::string_view bucket =
      args.command == Command::kVersion ? std::string_view() : std::string_view(args.bucket);
  absl::StatusOr<Client> connected =
      Client::connectToBucket(args.host, args.port, bucket, "syncwrite-cli",
                              {.timeout = wait, .user = args.user, .password = args.password});
  if (!connected.ok()) {
    err << describeTransportError(connected.status()) << "\n";
    return absl::IsNotFound(connected.status()) || absl::IsUnauthenticated(connected.status())
               ? kExitServerError
               : kExitNoAnswer;
  }
  Client& client = *connected;
  const std::string where = absl::StrCat(args.host, ":", args.port);
  auto lost = [&](const absl::Status& status) {
    err << where << ": " << describeTransportError(status) << "\n";
    return kExitNoAnswer;
  };

  if (args.command == Command::kStats) {
    absl::StatusOr<protocol::StatsReply> stats = client.stats(args.key);
    if (!stats.ok()) return lost(stats.status());
    if (!stats->ok()) {
      Response failure;
      failure.status = stats->status;
      failure.value = stats->error_context;
      err << describeFailure(args, failure) << "\n";
      return kExitServerError;
    }
    for (const auto& [name, value] : stats->stats) out << name << " " << value << "\n";
    return kExitOk;
  }

  const protocol::MutationOptions options{.durability = args.durability};
  absl::StatusOr<Response> response;
  switch (args.command) {
    case Command::kSet:
      response = client.set(args.vbucketOfKey(), args.key, args.value, options);
      break;
    case Command::kAdd:
      response = client.add(args.vbucketOfKey(), args.key, args.value, options);
      break;
    case Command::kReplace:
      response = client.replace(args.vbucketOfKey(), args.key, args.value, options);
      break;
    case Command::kDelete:
      response = client.del(args.vbucketOfKey(), args.key, options);
      break;
    case Command::kGet:
      response = client.get(args.vbucketOfKey(), args.key);
      break;
    case Command::kSetParam:
      response = client.setParam(args.key, args.value);
      break;
    case Command::kSetVbucket:
      response = client.setVbucketState(
          args.target_vbucket, args.state,
          args.topology.empty() ? std::string() : "{\"topology\": " + args.topology + "}");
      break;
    case Command::kVersion:
      response = client.version();
      break;
    case Command::kStats:
    case Command::kFailover:
    case Command::kHelp:
      return kExitOk;  // handled above
  }
  if (!response.ok()) return lost(response.status());
  if (!response->ok()) {
    err << describeFailure(args, *response) << "\n";
    return kExitServerError;
  }
  printSuccess(args, *response, out);
  return kExitOk;
}

}  // namespace syncwrite::server::cli
