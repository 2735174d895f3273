// Command line of syncwrite-cli, parsed without touching the network.
//
//   syncwrite-cli [--host H] [--port N] [--bucket B] [--vbuckets N | --vbucket N]
//                 COMMAND ARGS... [--durability LEVEL] [--timeout MS]
//
// Commands: set/add/replace KEY VALUE, get KEY, delete KEY, stats [GROUP],
// set-param KEY VALUE, set-vbucket VB STATE [TOPOLOGY], failover NODE
// (with --cluster FILE), version. The flags are Abseil
// flags declared in cli_args.cc and set by parseFlags (server/command_line.h,
// which says the syntax); they may come before or after the command. --durability and --timeout
// apply to set, add, replace and delete. LEVEL is a config spelling ("majority",
// "majority_and_persist_on_master", "persist_to_majority"; "none" = not
// durable) or a raw byte 0..255 (to see how the server answers a bad one);
// MS is 0..65535, sent as given (0 and 65535 are refused by the server).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

#include "server/protocol/command_values.h"
#include "server/protocol/request_encoder.h"

namespace syncwrite::server::cli {

enum class Command {
  kSet,
  kAdd,
  kReplace,
  kGet,
  kDelete,
  kStats,
  kSetParam,
  kSetVbucket,
  kFailover,
  kVersion,
  kHelp
};

struct CliArgs {
  std::string host = "127.0.0.1";
  uint16_t port = 11210;
  std::string bucket = "default";
  // The embedded default configuration's user; empty: no authentication.
  std::string user = "Administrator";
  std::string password = "password";
  uint32_t vbuckets = 1024;         // for the vbucket of a key
  std::optional<uint16_t> vbucket;  // --vbucket: forced
  Command command = Command::kHelp;
  std::string key;                                                 // KEY, GROUP, config key
  std::string value;                                               // VALUE
  uint16_t target_vbucket = 0;                                     // set-vbucket VB
  protocol::VbucketState state = protocol::VbucketState::kActive;  // set-vbucket STATE
  std::string topology;      // set-vbucket TOPOLOGY (JSON chains), or empty
  std::string cluster_file;  // --cluster, for failover (NODE is `key`)
  std::optional<protocol::DurabilitySpec> durability;

  // The vbucket a key command goes to: --vbucket, else the key's hash.
  uint16_t vbucketOfKey() const;
};

// Parses argv[1..argc), starting from the flags' defaults every time. An
// error names the offending argument and what was expected; the caller prints
// it with the usage and exits 2. Not thread-safe (the flags are global).
absl::StatusOr<CliArgs> parseArgs(const std::vector<std::string>& args);

// The usage text: the commands, then every flag with its default.
std::string usage();

}  // namespace syncwrite::server::cli
