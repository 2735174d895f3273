#include "server/server_config.h"

#include <algorithm>
#include <set>

#include <absl/strings/str_cat.h>

#include "config/read_file.h"
#include "durability/config_values.h"
#include "server/replica_faults.h"

namespace syncwrite::server {

const std::string_view kDefaultConfigJson = R"({
  "users": {"Administrator": {"password": "password"}},
  "buckets": {
    "default": {
      "replicas": ["replica1"],
      "simulated_replicas": {"replica1": {"ack_delay_ms": 1}}
    }
  }
})";

namespace {

constexpr size_t kMaxReplicas = 3;
constexpr size_t kMaxBucketNameLength = 100;

absl::Status invalid(std::string_view where, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(where), ": ", std::string(what)));
}

// Prefixes a status from the config layer with where the keys came from.
absl::Status located(std::string_view where, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(std::string(where), ": ", status.message()));
}

// kv_engine's bucket names: letters, digits and . % _ - (at most 100).
absl::Status checkBucketName(const std::string& name) {
  if (name.empty() || name.size() > kMaxBucketNameLength) {
    return invalid("buckets", absl::StrCat("bucket name '", name, "' must have 1..",
                                           kMaxBucketNameLength, " characters"));
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '%' || c == '_' || c == '-';
    if (!ok) {
      return invalid("buckets", absl::StrCat("bucket name '", name,
                                             "' may hold only letters, digits and . % _ -"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> parseReplicas(const std::string& where,
                                                       const nlohmann::json& value,
                                                       const std::string& node_name) {
  if (!value.is_array()) return invalid(where, "\"replicas\" must be an array of node names");
  if (value.size() > kMaxReplicas) {
    return invalid(where, absl::StrCat("\"replicas\" has ", value.size(),
                                       " nodes; a chain has at most ", kMaxReplicas));
  }
  std::vector<std::string> replicas;
  std::set<std::string> seen{node_name};
  for (const auto& node : value) {
    if (node.is_null()) {
      replicas.emplace_back();  // an undefined slot, as null in kv_engine's topology
      continue;
    }
    if (!node.is_string() || node.get<std::string>().empty()) {
      return invalid(where, absl::StrCat("\"replicas\" entry ", node.dump(),
                                         " is neither a non-empty node name nor null"));
    }
    const std::string name = node.get<std::string>();
    if (!seen.insert(name).second) {
      return invalid(where,
                     absl::StrCat("\"replicas\" names '", name,
                                  "' twice (or names this node, node_name '", node_name, "')"));
    }
    replicas.push_back(name);
  }
  return replicas;
}

absl::StatusOr<std::vector<SimulatedReplicaSpec>> parseSimulated(
    const std::string& where, const nlohmann::json& value,
    const std::vector<std::string>& replicas) {
  if (!value.is_object()) {
    return invalid(where, "\"simulated_replicas\" must be an object of node name -> settings");
  }
  std::vector<SimulatedReplicaSpec> simulated;
  for (const auto& [name, settings] : value.items()) {
    const std::string at = absl::StrCat(where, ".simulated_replicas.", name);
    if (std::find(replicas.begin(), replicas.end(), name) == replicas.end()) {
      return invalid(at, "not listed in \"replicas\"");
    }
    if (!settings.is_object()) return invalid(at, "must be an object like {\"ack_delay_ms\": 1}");
    SimulatedReplicaSpec spec{name, std::chrono::milliseconds(0), std::chrono::milliseconds(0)};
    for (const auto& [key, v] : settings.items()) {
      if (key != "ack_delay_ms" && key != "ack_jitter_ms") {
        return invalid(
            at, absl::StrCat("unknown key '", key, "' (expected ack_delay_ms or ack_jitter_ms)"));
      }
      if (!v.is_number_unsigned() || v.get<uint64_t>() > kMaxAckDelayMs) {
        return invalid(at, absl::StrCat(key, " ", v.dump(), " is not an unsigned integer in 0..",
                                        kMaxAckDelayMs));
      }
      (key == "ack_delay_ms" ? spec.ack_delay : spec.ack_jitter) =
          std::chrono::milliseconds(v.get<uint64_t>());
    }
    simulated.push_back(std::move(spec));
  }
  return simulated;
}

// Fills result.users and result.user_buckets; the bucket names are checked
// against the buckets once those are parsed (checkUserBuckets).
absl::Status parseUsers(const nlohmann::json& value, ServerConfig& result) {
  if (!value.is_object()) {
    return invalid("users", "must be an object of user name -> {\"password\": \"...\"}");
  }
  for (const auto& [name, body] : value.items()) {
    const std::string at = absl::StrCat("users.", name);
    if (name.empty()) return invalid("users", "a user name must not be empty");
    const bool shaped = body.is_object() && body.contains("password") &&
                        body["password"].is_string() &&
                        body.size() == (body.contains("buckets") ? 2u : 1u);
    if (!shaped) {
      return invalid(at,
                     "must be {\"password\": \"<text>\"}, optionally with \"buckets\": "
                     "[\"<bucket>\", ...], and nothing else");
    }
    result.users.emplace(name, body["password"].get<std::string>());
    if (!body.contains("buckets")) continue;
    const nlohmann::json& buckets = body["buckets"];
    if (!buckets.is_array()) return invalid(at + ".buckets", "must be an array of bucket names");
    auto& allowed = result.user_buckets[name];
    for (const nlohmann::json& bucket : buckets) {
      if (!bucket.is_string() || bucket.get<std::string>().empty()) {
        return invalid(at + ".buckets", "each entry must be a bucket's name");
      }
      allowed.insert(bucket.get<std::string>());
    }
  }
  return absl::OkStatus();
}

// Every bucket a user is limited to is one the config defines: a typo would
// otherwise lock the user out of the bucket meant.
absl::Status checkUserBuckets(const ServerConfig& result) {
  for (const auto& [user, allowed] : result.user_buckets) {
    for (const std::string& bucket : allowed) {
      const bool defined = std::any_of(result.buckets.begin(), result.buckets.end(),
                                       [&](const BucketSpec& b) { return b.name == bucket; });
      if (!defined) {
        return invalid(absl::StrCat("users.", user, ".buckets"),
                       absl::StrCat("no bucket named '", bucket, "' in \"buckets\""));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BucketSpec> parseBucket(const std::string& name, const nlohmann::json& body,
                                       const std::string& node_name,
                                       const std::optional<ClusterSpec>& cluster) {
  if (auto s = checkBucketName(name); !s.ok()) return s;
  const std::string where = absl::StrCat("buckets.", name);
  if (!body.is_object()) return invalid(where, "must be an object of bucket keys");

  BucketSpec spec;
  spec.name = name;
  nlohmann::json keys = nlohmann::json::object();
  nlohmann::json simulated = nlohmann::json::object();
  for (const auto& [key, value] : body.items()) {
    if (cluster && (key == "replicas" || key == "simulated_replicas")) {
      return invalid(where,
                     absl::StrCat("\"", key,
                                  "\" is for a single node: in a cluster each vbucket's "
                                  "chain comes from \"num_replicas\" and the cluster's nodes"));
    }
    if (key == "num_replicas") {
      if (!cluster)
        return invalid(where, "\"num_replicas\" needs a \"cluster\" (else \"replicas\")");
      const size_t most = std::min(kMaxReplicas, cluster->nodes.size() - 1);
      if (!value.is_number_unsigned() || value.get<uint64_t>() > most) {
        return invalid(where, absl::StrCat("\"num_replicas\" ", value.dump(), " is not in 0..",
                                           most, " (at most 3, and fewer than the ",
                                           cluster->nodes.size(), " nodes)"));
      }
      spec.num_replicas = value.get<size_t>();
    } else if (key == "replicas") {
      auto replicas = parseReplicas(where, value, node_name);
      if (!replicas.ok()) return replicas.status();
      spec.replicas = std::move(*replicas);
    } else if (key == "simulated_replicas") {
      simulated = value;
    } else {
      keys[key] = value;
    }
  }
  auto sims = parseSimulated(where, simulated, spec.replicas);
  if (!sims.ok()) return sims.status();
  spec.simulated = std::move(*sims);

  spec.config = std::make_unique<config::Configuration>(config::Scope::kBucket);
  if (auto s = spec.config->loadJson(keys); !s.ok()) return located(where, s);
  return spec;
}

}  // namespace

absl::StatusOr<ServerConfig> loadServerConfig(const nlohmann::json& document,
                                              std::string_view node) {
  if (!document.is_object()) return invalid("config", "the document must be a JSON object");
  ServerConfig result;
  nlohmann::json server_keys = nlohmann::json::object();
  const nlohmann::json* buckets = nullptr;
  for (const auto& [key, value] : document.items()) {
    if (key == "users") {
      if (auto s = parseUsers(value, result); !s.ok()) return s;
    } else if (key == "cluster") {
      auto cluster = parseClusterSpec(value);
      if (!cluster.ok()) return cluster.status();
      result.cluster = std::move(*cluster);
    } else if (key == "buckets") {
      buckets = &value;
    } else {
      server_keys[key] = value;
    }
  }
  if (!node.empty()) server_keys["node_name"] = std::string(node);
  result.server = std::make_unique<config::Configuration>(config::Scope::kServer);
  if (auto s = result.server->loadJson(server_keys); !s.ok()) return located("config", s);
  if (server_keys.contains("prometheus_port")) {
    result.prometheus_port =
        static_cast<uint16_t>(result.server->get(config::keys::kPrometheusPort));
  }

  if (buckets == nullptr || !buckets->is_object() || buckets->empty()) {
    return invalid("config", "\"buckets\" must be an object naming at least one bucket");
  }
  const std::string node_name = result.server->get(config::keys::kNodeName);
  if (node_name.empty()) return invalid("config", "node_name must not be empty");
  if (result.cluster) {
    if (result.cluster->find(node_name) == nullptr) {
      return invalid("config",
                     absl::StrCat("node_name '", node_name, "' is not one of the cluster's nodes"));
    }
    const std::string& user = result.cluster->replication_user;
    if (!result.users.empty() && (user.empty() || !result.users.contains(user))) {
      return invalid(
          "cluster.replication_user",
          absl::StrCat("'", user, "' must name one of \"users\": replicas authenticate as it"));
    }
  }
  for (const auto& [name, body] : buckets->items()) {
    auto bucket = parseBucket(name, body, node_name, result.cluster);
    if (!bucket.ok()) return bucket.status();
    result.buckets.push_back(std::move(*bucket));
  }
  std::string data_dir = result.server->get(config::keys::kDataDir);
  if (const ClusterNode* self = result.cluster ? result.cluster->find(node_name) : nullptr;
      self != nullptr && !self->data_dir.empty()) {
    data_dir = self->data_dir;
  }
  for (BucketSpec& bucket : result.buckets) {
    if (bucket.config->get(config::keys::kBucketType) != config::BucketType::kCouchbase) {
      const durability::Level min_level =
          durability::minLevelOf(bucket.config->get(config::keys::kDurabilityMinLevel));
      if (absl::Status s = durability::checkMinLevel(min_level, false); !s.ok()) {
        return invalid(absl::StrCat("buckets.", bucket.name, ".durability_min_level"),
                       std::string(s.message()));
      }
      if (bucket.config->get(config::keys::kFlushDelayMs).count() != 0 ||
          bucket.config->get(config::keys::kFlusherPaused)) {
        return invalid(absl::StrCat("buckets.", bucket.name),
                       "flush_delay_ms and flusher_paused need a flusher, and an ephemeral "
                       "bucket has none (bucket_type)");
      }
      continue;
    }
    if (data_dir.empty()) {
      return invalid(absl::StrCat("buckets.", bucket.name, ".bucket_type"),
                     "couchbase (a persistent bucket) needs the server key data_dir, the "
                     "directory its data is kept under");
    }
    bucket.data_dir = std::filesystem::path(data_dir) / bucket.name;
  }
  if (auto s = checkUserBuckets(result); !s.ok()) return s;
  return result;
}

absl::StatusOr<ServerConfig> loadServerConfigText(std::string_view text, std::string_view node) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // The parser's message names the byte position.
    return invalid("config", absl::StrCat("malformed JSON: ", e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double (1e999) is out_of_range 406, not a
    // parse_error (found by tests/fuzz/config_fuzz.cc).
    return invalid("config", absl::StrCat("malformed JSON: ", e.what()));
  }
  return loadServerConfig(document, node);
}

absl::StatusOr<ServerConfig> loadServerConfigFile(const std::filesystem::path& path,
                                                  std::string_view node) {
  absl::StatusOr<std::string> text = config::readFile(path);
  if (!text.ok()) return text.status();
  auto result = loadServerConfigText(*text, node);
  if (!result.ok()) return located(path.string(), result.status());
  return result;
}

}  // namespace syncwrite::server
