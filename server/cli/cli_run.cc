#include "server/cli/cli_run.h"

#include <absl/strings/str_cat.h>

#include "server/cli/cli_outcome.h"
#include "server/protocol/client.h"

namespace syncwrite::server::cli {

namespace {

using protocol::Client;
using protocol::Feature;
using protocol::Response;

constexpr Feature kFeatures[] = {Feature::kXerror, Feature::kSelectBucket,
                                 Feature::kAltRequestSupport, Feature::kSyncReplication};

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
  absl::StatusOr<Client> connected = Client::connect(args.host, args.port, {.timeout = wait});
  if (!connected.ok()) {
    err << describeTransportError(connected.status()) << "\n";
    return kExitNoAnswer;
  }
  Client& client = *connected;
  const std::string where = absl::StrCat(args.host, ":", args.port);
  auto lost = [&](const absl::Status& status) {
    err << where << ": " << describeTransportError(status) << "\n";
    return kExitNoAnswer;
  };

  if (auto hello = client.hello(kFeatures, "syncwrite-cli"); !hello.ok()) {
    return lost(hello.status());
  }
  if (args.command != Command::kVersion) {
    absl::StatusOr<Response> selected = client.selectBucket(args.bucket);
    if (!selected.ok()) return lost(selected.status());
    if (!selected->ok()) {
      const std::string context = selected->errorContext();
      err << "no bucket \"" << args.bucket << "\": " << protocol::describe(selected->status)
          << (context.empty() ? "" : " (server: " + context + ")") << "\n";
      return kExitServerError;
    }
  }

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
      response = client.setVbucketState(args.target_vbucket, args.state);
      break;
    case Command::kVersion:
      response = client.version();
      break;
    case Command::kStats:
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
