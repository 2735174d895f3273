#include "server/cli/cli_args.h"

#include <charconv>

#include <absl/strings/str_cat.h>

#include "durability/level.h"
#include "server/protocol/vbucket_hash.h"

namespace syncwrite::server::cli {

namespace {

// An unsigned number in [0, max], or an error naming `what`.
absl::StatusOr<uint64_t> number(const std::string& text, uint64_t max, std::string_view what) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what), " must be a number 0..", max, ", got \"", text, "\""));
  }
  return value;
}

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
    {"set-vbucket", Command::kSetVbucket, 2, 0},
    {"version", Command::kVersion, 0, 0},
    {"help", Command::kHelp, 0, 0},
};

}  // namespace

uint16_t CliArgs::vbucketOfKey() const {
  return vbucket ? *vbucket : protocol::vbucketOfKey(key, vbuckets);
}

std::string usage() {
  return R"(usage: syncwrite-cli [--host H] [--port N] [--bucket B] [--vbuckets N | --vbucket N]
                     COMMAND [ARGS] [--durability LEVEL] [--timeout MS]
commands:
  set KEY VALUE       store (also: add KEY VALUE, replace KEY VALUE)
  get KEY             print the value
  delete KEY          remove
  stats [GROUP]       "" (general), durability, config, tasks
  set-param KEY VALUE change a dynamic config key of the bucket
  set-vbucket VB STATE  active | replica | pending | dead
  version             the server's version
options:
  --host H            default 127.0.0.1
  --port N            default 11210
  --bucket B          default "default"
  --vbuckets N        vbuckets per bucket, for the vbucket of a key (default 1024)
  --vbucket N         send key commands to vbucket N instead
  --durability LEVEL  majority | majority_and_persist_on_master | persist_to_majority
  --timeout MS        durability timeout, 1..65534 ms (default: the bucket's)
)";
}

absl::StatusOr<CliArgs> parseArgs(const std::vector<std::string>& args) {
  CliArgs out;
  std::vector<std::string> positional;
  std::optional<durability::Level> level;
  std::optional<uint16_t> timeout;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      out.command = Command::kHelp;
      return out;
    }
    if (arg.size() < 2 || arg.substr(0, 2) != "--") {
      positional.push_back(arg);
      continue;
    }
    if (i + 1 >= args.size()) {
      return absl::InvalidArgumentError(absl::StrCat(arg, " needs a value"));
    }
    const std::string& value = args[++i];
    if (arg == "--host") {
      out.host = value;
    } else if (arg == "--port") {
      auto port = number(value, 65535, "--port");
      if (!port.ok()) return port.status();
      out.port = static_cast<uint16_t>(*port);
    } else if (arg == "--bucket") {
      out.bucket = value;
    } else if (arg == "--vbuckets") {
      auto n = number(value, 65536, "--vbuckets");
      if (!n.ok()) return n.status();
      if (*n == 0) return absl::InvalidArgumentError("--vbuckets must be at least 1");
      out.vbuckets = static_cast<uint32_t>(*n);
    } else if (arg == "--vbucket") {
      auto n = number(value, 65535, "--vbucket");
      if (!n.ok()) return n.status();
      out.vbucket = static_cast<uint16_t>(*n);
    } else if (arg == "--durability") {
      if (auto named = durability::levelFromString(value)) {
        level = *named;
      } else {
        auto raw = number(value, 255, "--durability");
        if (!raw.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("--durability must be majority, majority_and_persist_on_master, "
                           "persist_to_majority, none or a level byte 0..255, got \"",
                           value, "\""));
        }
        level = static_cast<durability::Level>(*raw);
      }
    } else if (arg == "--timeout") {
      auto ms = number(value, 65535, "--timeout");
      if (!ms.ok()) return ms.status();
      timeout = static_cast<uint16_t>(*ms);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", arg));
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
  if (out.command == Command::kSetVbucket) {
    auto vb = number(out.key, 65535, "set-vbucket VB");
    if (!vb.ok()) return vb.status();
    out.target_vbucket = static_cast<uint16_t>(*vb);
    if (auto state = protocol::vbucketStateFromString(out.value)) {
      out.state = *state;
    } else if (auto numeric = number(out.value, 255, "set-vbucket STATE");
               numeric.ok() && protocol::vbucketStateFromWire(static_cast<uint32_t>(*numeric))) {
      out.state = *protocol::vbucketStateFromWire(static_cast<uint32_t>(*numeric));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "set-vbucket STATE must be active, replica, pending or dead (or 1..4), got \"", out.value,
          "\""));
    }
  }
  return out;
}

}  // namespace syncwrite::server::cli
