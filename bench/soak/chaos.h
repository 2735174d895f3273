// Chaos: the soak's fault injector (issue 18), on a thread of its own.
//
// Every 20..200 ms it does one of: pause the simulated replica (for at most
// 800 ms, so some writes time out and the others commit when it resumes, in
// order, or when the external replica acks them); pause the external replica
// (dcp_replica.h; at most 800 ms) or drop its connection; stall the
// flusher (at most 1 s: the persist levels wait, the log behind it
// grows); switch durability_timeout_mode; set
// durability_timeout_task_interval to 5..100 ms; make one vbucket a replica
// (its SyncWrites are answered ambiguous and its requests NotMyVbucket) and
// back to active on a later turn; drop a worker's connection with its batch
// in flight; send junk on a spare connection. Every admin command must be
// answered Success; the junk connection must be closed or answered, and the
// admin connection must keep working.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/soak/dcp_replica.h"
#include "bench/soak/tally.h"
#include "bench/soak/worker.h"
#include "server/protocol/client.h"

namespace syncwrite::bench::soak {

class Chaos {
 public:
  Chaos(uint16_t port, int vbuckets, std::vector<Worker*> workers, DcpReplica& replica2,
        uint64_t seed, Anomalies& anomalies);

  void run(const std::atomic<bool>& stop);
  // After run(): replicas and flusher running, every vbucket active; then
  // closes the admin connection.
  void restore();
  // Faults injected, by kind.
  nlohmann::json counts() const;

 private:
  bool setParam(const std::string& key, const std::string& value);
  bool setActive(uint16_t vbucket, bool active);
  void junk();

  const uint16_t port_;
  const int vbuckets_;
  const std::vector<Worker*> workers_;
  DcpReplica& replica2_;
  Anomalies& anomalies_;
  std::mt19937_64 random_;
  std::optional<server::protocol::Client> admin_;
  std::optional<std::chrono::steady_clock::time_point> paused_since_;
  std::optional<std::chrono::steady_clock::time_point> replica2_paused_since_;
  std::optional<std::chrono::steady_clock::time_point> stalled_since_;
  bool polling_ = false;
  std::vector<uint16_t> replica_vbuckets_;
  std::map<std::string, uint64_t> counts_;
};

}  // namespace syncwrite::bench::soak
