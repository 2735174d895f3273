#include "server/cli/cli_args.h"

#include <absl/flags/flag.h>
#include <absl/strings/str_cat.h>

#include "durability/level.h"
#include "server/command_line.h"
#include "server/parse_number.h"
#include "server/protocol/vbucket_hash.h"

// syncwrite-cli's flags. Global (ABSL_FLAG): only syncwrite-cli and its tests
// link this file.
ABSL_FLAG(std::string, host, "127.0.0.1", "server address");
ABSL_FLAG(uint16_t, port, 11210, "server port, 0..65535");
ABSL_FLAG(std::string, bucket, "default", "bucket to select");
ABSL_FLAG(std::string, user, "Administrator",
          "user to authenticate as (SASL PLAIN); empty: do not authenticate");
ABSL_FLAG(std::string, password, "password", "password of --user");
ABSL_FLAG(uint32_t, vbuckets, 1024, "vbuckets per bucket, 1..65536, to find the vbucket of a key");
ABSL_FLAG(std::optional<uint16_t>, vbucket, std::nullopt,
          "send key commands to this vbucket (0..65535) instead of the key's");
ABSL_FLAG(std::string, durability, "",
          "make set/add/replace/delete a SyncWrite: majority | majority_and_persist_on_master | "
          "persist_to_majority, or a level byte 0..255 sent as given; empty or none: a plain "
          "write");
ABSL_FLAG(std::string, cluster, "",
          "failover: the cluster's configuration file (its \"cluster\" entry names the nodes)");
ABSL_FLAG(std::optional<uint16_t>, timeout, std::nullopt,
          "durability timeout in ms with --durability, 0..65535 sent as given (the server "
          "refuses 0 and 65535); none: the bucket's");

namespace syncwrite::server::cli {

namespace {

// This file, whose flags are syncwrite-cli's (see parseFlags).
constexpr char kFlagsFile[] = "server/cli/cli_args.cc";

struct CommandName {
  std::string_view name;
  Command command;
  size_t operands;
  size_t optional_operands;
};

constexpr CommandName kCommands[] = {
    {"set", Command::kSet, 2, 0},
    {"add", Command::kAdd, 2, 0},
    {"replace", Command::kReplace, 2, 0},
    {"get", Command::kGet, 1, 0},
    {"delete", Command::kDelete, 1, 0},
    {"stats", Command::kStats, 0, 1},
    {"set-param", Command::kSetParam, 2, 0},
    {"set-vbucket", Command::kSetVbucket, 2, 1},
    {"failover", Command::kFailover, 1, 0},
    {"version", Command::kVersion, 0, 0},
    {"help", Command::kHelp, 0, 0},
};

}  // namespace

uint16_t CliArgs::vbucketOfKey() const {
  return vbucket ? *vbucket : protocol::vbucketOfKey(key, vbuckets);
}

std::string usage() {
  return flagsHelp(R"(usage: syncwrite-cli [flags] COMMAND [ARGS]   (flags may come anywhere)
commands:
  set KEY VALUE         store (also: add KEY VALUE, replace KEY VALUE)
  get KEY               print the value
  delete KEY            remove
  stats [GROUP]         "" (general), durability, config, tasks
  set-param KEY VALUE   change a dynamic config key of the bucket
  set-vbucket VB STATE [TOPOLOGY]
                        active | replica | pending | dead (or 1..4); TOPOLOGY is
                        kv_engine's chains, e.g. '[["n2", "n3"]]': a replica made
                        active with one is promoted
  failover NODE         with --cluster FILE: promote, for each vbucket NODE was
                        active for, the replica furthest ahead, and give every
                        other node the chains without NODE (ns_server's hard
                        failover)
  version               the server's version
  help                  this text
)",
                   kFlagsFile);
}

absl::StatusOr<CliArgs> parseArgs(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> line = parseFlags(args, kFlagsFile);
  if (!line.ok()) return line.status();
  CliArgs out;
  if (line->help) {
    out.command = Command::kHelp;
    return out;
  }
  const std::vector<std::string>& positional = line->positional;
  out.host = absl::GetFlag(FLAGS_host);
  out.port = absl::GetFlag(FLAGS_port);
  out.bucket = absl::GetFlag(FLAGS_bucket);
  out.user = absl::GetFlag(FLAGS_user);
  out.password = absl::GetFlag(FLAGS_password);
  out.vbuckets = absl::GetFlag(FLAGS_vbuckets);
  if (out.vbuckets == 0 || out.vbuckets > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("--vbuckets must be a number 1..65536, got ", out.vbuckets));
  }
  out.vbucket = absl::GetFlag(FLAGS_vbucket);
  out.cluster_file = absl::GetFlag(FLAGS_cluster);
  const std::optional<uint16_t> timeout = absl::GetFlag(FLAGS_timeout);
  std::optional<durability::Level> level;
  if (const std::string text = absl::GetFlag(FLAGS_durability); !text.empty()) {
    if (auto named = durability::levelFromString(text)) {
      level = *named;
    } else if (auto raw = parseNumber<uint8_t>(text)) {
      level = static_cast<durability::Level>(*raw);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--durability must be majority, majority_and_persist_on_master, "
                       "persist_to_majority, none or a level byte 0..255, got \"",
                       text, "\""));
    }
  }

  if (positional.empty()) return absl::InvalidArgumentError("no command given");
  const CommandName* command = nullptr;
  for (const CommandName& c : kCommands) {
    if (c.name == positional[0]) command = &c;
  }
  if (command == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown command \"", positional[0], "\""));
  }
  const size_t operands = positional.size() - 1;
  if (operands < command->operands || operands > command->operands + command->optional_operands) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(command->name), " takes ", command->operands, " argument(s), got ", operands));
  }
  out.command = command->command;
  if (operands >= 1) out.key = positional[1];
  if (operands >= 2) out.value = positional[2];
  if (operands >= 3) out.topology = positional[3];

  const bool mutation = out.command == Command::kSet || out.command == Command::kAdd ||
                        out.command == Command::kReplace || out.command == Command::kDelete;
  if ((level || timeout) && !mutation) {
    return absl::InvalidArgumentError(
        "--durability and --timeout apply to set, add, replace and delete only");
  }
  if (timeout && !level) return absl::InvalidArgumentError("--timeout needs --durability");
  if (level && *level != durability::Level::kNone) {
    out.durability = protocol::DurabilitySpec{*level, timeout};
  }
  if (out.command == Command::kFailover && out.cluster_file.empty()) {
    return absl::InvalidArgumentError("failover needs --cluster FILE, the cluster's configuration");
  }
  if (out.command == Command::kSetVbucket) {
    const std::optional<uint16_t> vb = parseNumber<uint16_t>(out.key);
    if (!vb) {
      return absl::InvalidArgumentError(
          absl::StrCat("set-vbucket VB must be a number 0..65535, got \"", out.key, "\""));
    }
    out.target_vbucket = *vb;
    if (auto state = protocol::vbucketStateFromString(out.value)) {
      out.state = *state;
    } else if (auto wire = parseNumber<uint8_t>(out.value);
               wire && protocol::vbucketStateFromWire(*wire)) {
      out.state = *protocol::vbucketStateFromWire(*wire);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "set-vbucket STATE must be active, replica, pending or dead (or 1..4), got \"", out.value,
          "\""));
    }
  }
  return out;
}

}  // namespace syncwrite::server::cli
