// LoadOptions: what one mcbp_load run does, as the command line asked.
//
// The flags live in mcbp_load_main.cc; this is the plain struct they fill,
// with the parsing of the enumerated flags and the cross-flag checks, so the
// rest of the program never reads a flag.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "durability/level.h"

namespace syncwrite::bench::mcbp_load {

// The request mix. kMix sends SET with probability set_ratio, else GET.
enum class Op { kSet, kGet, kMix, kAdd, kReplace, kDelete };

// "set", "get", "mix", "add", "replace", "delete"; InvalidArgument naming the
// accepted spellings for anything else.
absl::StatusOr<Op> parseOp(std::string_view name);
std::string_view toString(Op op) noexcept;

// "none", "majority", "majority_and_persist_on_master", "persist_to_majority"
// (durability::levelFromString's spellings); InvalidArgument otherwise.
absl::StatusOr<durability::Level> parseDurability(std::string_view name);

struct LoadOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 11210;
  std::string bucket = "default";
  std::string user = "Administrator";  // empty: no SASL
  std::string password = "password";
  bool plain_memcached = false;  // connect only: no HELLO, SASL or SELECT_BUCKET; vbucket 0

  unsigned connections = 4;
  // Threads driving them (connection i on thread i % threads); 0: one per
  // connection. More than connections is the same as connections.
  unsigned threads = 0;
  unsigned depth = 32;  // requests (or quiet batches) in flight per connection
  // > 0: memcached's quiet pipeline. Each slot in flight is a batch of this
  // many quiet requests (SETQ, GETKQ, ADDQ, REPLACEQ, DELETEQ), which the
  // server answers only on failure (GETKQ: only on a hit), ended by a NOOP
  // whose answer comes after all of theirs. Latency is then per batch.
  uint32_t quiet_batch = 0;

  Op op = Op::kSet;
  double set_ratio = 0.1;  // kMix only
  uint32_t keys = 100'000;
  uint32_t vbuckets = 1024;
  uint32_t value_size = 100;
  // The value is a JSON document of value_size bytes ({"v":"vvv..."}),
  // which the server validates, instead of value_size bytes of 'v'.
  bool value_json = false;
  durability::Level durability = durability::Level::kNone;
  uint16_t durability_timeout_ms = 0;  // 0: none sent (the server's default applies)
  bool preload = false;
  // Each connection walks its share of the keys in order (N = index, index +
  // connections, ...) instead of picking them at random: a run of at most
  // `keys` requests then uses each key once (no two SyncWrites on one key).
  bool keys_in_order = false;

  std::chrono::milliseconds duration{10'000};    // used when requests == 0
  uint64_t requests = 0;                         // total over all connections; 0: by duration
  std::chrono::milliseconds report_interval{0};  // 0: no interval lines
  std::optional<int> server_pid;                 // sample /proc/PID when set
  // > 0: every timed request slower than this is logged with the wall-clock
  // time of its answer (at most kSlowLogCap per connection), so a stall can
  // be placed against what else happened then.
  std::chrono::microseconds slow_log{0};
  uint64_t seed = 1;
};

// The cross-flag checks: connections, depth, keys, vbuckets >= 1; set_ratio
// in [0, 1]; depth <= 65536; quiet_batch <= 4096; durability needs a server that speaks it (not
// plain_memcached) and a mutation op. InvalidArgument naming the flag.
absl::Status validate(const LoadOptions& options);

// The threads a run uses: --threads, or one per connection; never more
// threads than connections.
unsigned threadCount(const LoadOptions& options) noexcept;

}  // namespace syncwrite::bench::mcbp_load
