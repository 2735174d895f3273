// Fuzz target: syncwrite-server's configuration file (server/server_config.h):
// server keys, "users", "buckets" with their keys, "replicas" and
// "simulated_replicas".
//
// Input: JSON text, as a --config file holds it.
//
// ServerConfig has no printer of its own; print() below writes one back in
// the file's shape (server keys at the top, every key at its loaded value).
//
// Properties, for a file loadServerConfigText() accepts:
//  - printed, it is accepted again, and prints the same (a fixpoint);
//  - the reloaded users, bucket names, replicas (null slots included) and
//    simulated replicas with their delays are the loaded ones.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/server_config.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace server = syncwrite::server;

nlohmann::json print(const server::ServerConfig& config) {
  nlohmann::json out = config.server->toJson();
  nlohmann::json users = nlohmann::json::object();
  for (const auto& [name, password] : config.users) users[name] = {{"password", password}};
  if (!config.users.empty()) out["users"] = users;
  nlohmann::json buckets = nlohmann::json::object();
  for (const server::BucketSpec& bucket : config.buckets) {
    nlohmann::json body = bucket.config->toJson();
    nlohmann::json replicas = nlohmann::json::array();
    for (const std::string& r : bucket.replicas) {
      replicas.push_back(r.empty() ? nlohmann::json(nullptr) : nlohmann::json(r));
    }
    body["replicas"] = replicas;
    nlohmann::json simulated = nlohmann::json::object();
    for (const server::SimulatedReplicaSpec& s : bucket.simulated) {
      simulated[s.name] = {{"ack_delay_ms", s.ack_delay.count()},
                           {"ack_jitter_ms", s.ack_jitter.count()}};
    }
    body["simulated_replicas"] = simulated;
    buckets[bucket.name] = body;
  }
  out["buckets"] = buckets;
  return out;
}

void checkSame(const server::ServerConfig& a, const server::ServerConfig& b) {
  FUZZ_CHECK(a.users == b.users, "the users changed");
  FUZZ_CHECK(a.buckets.size() == b.buckets.size(), "the buckets changed");
  for (size_t i = 0; i < a.buckets.size(); ++i) {
    const server::BucketSpec& x = a.buckets[i];
    const server::BucketSpec& y = b.buckets[i];
    FUZZ_CHECK(x.name == y.name && x.replicas == y.replicas, "a bucket's name or chain changed");
    FUZZ_CHECK(x.simulated.size() == y.simulated.size(), "the simulated replicas changed");
    for (size_t j = 0; j < x.simulated.size(); ++j) {
      FUZZ_CHECK(x.simulated[j].name == y.simulated[j].name &&
                     x.simulated[j].ack_delay == y.simulated[j].ack_delay &&
                     x.simulated[j].ack_jitter == y.simulated[j].ack_jitter,
                 "a simulated replica changed");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto loaded =
      server::loadServerConfigText(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!loaded.ok()) return 0;
  const nlohmann::json printed = print(*loaded);
  const auto again = server::loadServerConfigText(printed.dump());
  FUZZ_CHECK(again.ok(), std::string(again.status().message()));
  FUZZ_CHECK(print(*again) == printed, "the reprinted configuration prints otherwise");
  checkSame(*loaded, *again);
  return 0;
}
