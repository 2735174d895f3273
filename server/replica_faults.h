// The fault-injection keys of a bucket's simulated replicas, as text.
//
// Three bucket keys (config/schema.json), all dynamic, so that a test can make
// a replica slow, jittery or silent in the middle of a run and heal it again
// with SET_PARAM (or `syncwrite-cli set-param`):
//   simulated_replica_ack_delay_ms   "N" (every simulated replica) or
//                                    "replica1=N,replica2=M" (those named);
//   simulated_replica_ack_jitter_ms  the same forms;
//   simulated_replicas_paused        "replica1,replica2", "*" (all) or "" (none).
// "" leaves delays and jitters as they are. N is 0..60000 (ms).
//
// These functions only parse and check against the bucket's simulated replica
// names; Bucket registers them as the keys' validators (a bad value is refused
// by SET_PARAM with the message, and changes nothing) and applies the parsed
// values to its SimulatedReplicas.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

namespace syncwrite::server {

inline constexpr uint64_t kMaxAckDelayMs = 60000;

// The value of `key` (for messages) as replica name → milliseconds. Errors
// (InvalidArgument, naming the key and the value): a malformed entry, a
// number outside 0..kMaxAckDelayMs, a name not in `names`.
absl::StatusOr<std::map<std::string, std::chrono::milliseconds>> parsePerReplicaMillis(
    std::string_view key, std::string_view text, const std::vector<std::string>& names);

// The replicas simulated_replicas_paused names ("*": all of `names`). Errors
// as above.
absl::StatusOr<std::set<std::string>> parsePausedReplicas(std::string_view text,
                                                          const std::vector<std::string>& names);

}  // namespace syncwrite::server
