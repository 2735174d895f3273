#include "server/cli/cli_outcome.h"

#include <absl/strings/ascii.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::server::cli {

namespace {
using protocol::Status;

// " (server: CONTEXT)" when the server said something, else "".
std::string serverSays(const std::string& context) {
  return context.empty() ? "" : absl::StrCat(" (server: ", context, ")");
}

// `base`, with the server's context: the context alone when it already starts
// with `base` (no "invalid durability level (server: invalid durability level 9)").
std::string withContext(std::string_view base, const std::string& context) {
  if (!context.empty() && absl::StartsWithIgnoreCase(context, std::string(base))) return context;
  return absl::StrCat(std::string(base), serverSays(context));
}
}  // namespace

std::string describeFailure(const CliArgs& args, const protocol::Response& response) {
  std::string context = response.errorContext();
  switch (response.status) {
    case Status::kSyncWriteAmbiguous: {
      // A timeout is the usual cause; the server's context names any other
      // (syncwrite-server says "SyncWrite ambiguous: <reason>", reason one of
      // timeout, left_active, bucket_deleted, shutdown).
      const std::string reason = absl::AsciiStrToLower(context);
      if (absl::StrContains(reason, "left_active") || absl::StrContains(reason, "left active")) {
        return absl::StrCat("ambiguous: vbucket ", args.vbucketOfKey(),
                            " left the active state before the write resolved");
      }
      if (absl::StrContains(reason, "shutdown") || absl::StrContains(reason, "shut down")) {
        return "ambiguous: the server shut down before the write resolved";
      }
      if (absl::StrContains(reason, "bucket_deleted") ||
          absl::StrContains(reason, "bucket deleted")) {
        return "ambiguous: the bucket was deleted before the write resolved";
      }
      if (!reason.empty() && !absl::StrContains(reason, "timeout") &&
          !absl::StrContains(reason, "timed out")) {
        return absl::StrCat("ambiguous: ", context);
      }
      const std::string after = args.durability && args.durability->timeout_ms
                                    ? absl::StrCat(*args.durability->timeout_ms, " ms")
                                    : std::string("the bucket's default timeout");
      return absl::StrCat("ambiguous: durability timeout after ", after);
    }
    case Status::kKeyNotFound:
      if (args.command == Command::kStats) {
        if (absl::StartsWithIgnoreCase(context, "unknown stat group")) return context;
        return absl::StrCat("unknown stat group \"", args.key, "\"", serverSays(context));
      }
      return "not found";
    case Status::kKeyExists:
      return absl::StrCat("key exists: ", args.key);
    case Status::kSyncWriteInProgress:
      return absl::StrCat("sync write in progress on ", args.key);
    case Status::kDurabilityImpossible:
      return withContext("durability impossible", context);
    case Status::kDurabilityInvalidLevel:
      return withContext("invalid durability level", context);
    case Status::kNotMyVbucket:
      return absl::StrCat(
          "not my vbucket (vbucket ",
          args.command == Command::kSetVbucket ? args.target_vbucket : args.vbucketOfKey(), ")");
    case Status::kNoBucket:
      return withContext("no bucket", context);
    case Status::kEinval:
      return absl::StrCat("invalid arguments", context.empty() ? "" : ": ", context);
    case Status::kTooBig:
      return "value too large";
    case Status::kNotStored:
      return absl::StrCat("not stored: ", args.key);
    case Status::kUnknownCommand:
      return "unknown command (the server does not implement it)";
    default:
      break;
  }
  return absl::StrCat(std::string(protocol::describe(response.status)), " (status 0x",
                      absl::Hex(static_cast<uint16_t>(response.status)), ")", serverSays(context));
}

std::string describeTransportError(const absl::Status& status) {
  return std::string(status.message());
}

}  // namespace syncwrite::server::cli
