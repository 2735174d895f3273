#include "server/stored_vbucket_state.h"

#include <absl/strings/str_cat.h>
#include <nlohmann/json.hpp>

namespace syncwrite::server {

namespace {

std::optional<vbucket::VBucketState> stateNamed(std::string_view name) {
  for (vbucket::VBucketState s : {vbucket::VBucketState::kActive, vbucket::VBucketState::kReplica,
                                  vbucket::VBucketState::kPending, vbucket::VBucketState::kDead}) {
    if (toString(s) == name) return s;
  }
  return std::nullopt;
}

}  // namespace

std::string StoredVBucketState::toJson() const {
  nlohmann::json failover_table = nlohmann::json::array();
  for (const vbucket::FailoverEntry& entry : failovers) {
    failover_table.push_back({{"id", entry.uuid}, {"seq", entry.seqno}});
  }
  const nlohmann::json out = {{"version", kVersion},
                              {"state", std::string(toString(state))},
                              {"high_seqno", high_seqno},
                              {"failover_table", std::move(failover_table)},
                              {"max_cas", max_cas}};
  // The topology's text goes in as it is, before the object's closing brace.
  std::string text = out.dump();
  text.pop_back();
  text += ",\"replication_topology\":";
  text += topology;
  text += '}';
  return text;
}

absl::StatusOr<StoredVBucketState> StoredVBucketState::fromJson(vbucket::Vbid vbid,
                                                                std::string_view json) {
  auto bad = [vbid](std::string_view what) {
    return absl::DataLossError(
        absl::StrCat("vbucket ", vbid, "'s stored state: ", std::string(what)));
  };
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return bad("not a JSON object");
  if (!doc.contains("version") || doc["version"] != kVersion) {
    return bad(absl::StrCat("version is not ", kVersion));
  }
  StoredVBucketState out;
  const auto state = doc.find("state");
  if (state == doc.end() || !state->is_string()) return bad("\"state\" is not a string");
  const std::optional<vbucket::VBucketState> named = stateNamed(state->get<std::string>());
  if (!named) return bad(absl::StrCat("\"state\" ", state->dump(), " is no vbucket state"));
  out.state = *named;
  for (const char* key : {"high_seqno", "max_cas"}) {
    const auto it = doc.find(key);
    if (it == doc.end() || !it->is_number_unsigned()) {
      return bad(absl::StrCat("\"", key, "\" is not an unsigned number"));
    }
  }
  out.high_seqno = doc["high_seqno"].get<uint64_t>();
  out.max_cas = doc["max_cas"].get<uint64_t>();
  const auto table = doc.find("failover_table");
  if (table == doc.end() || !table->is_array()) return bad("\"failover_table\" is not an array");
  for (const nlohmann::json& entry : *table) {
    if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_number_unsigned() ||
        !entry.contains("seq") || !entry["seq"].is_number_unsigned()) {
      return bad(absl::StrCat("failover entry ", entry.dump(), " is not {\"id\": n, \"seq\": n}"));
    }
    out.failovers.push_back({entry["id"].get<uint64_t>(), entry["seq"].get<uint64_t>()});
  }
  const auto topology = doc.find("replication_topology");
  if (topology != doc.end()) out.topology = topology->dump();
  return out;
}

}  // namespace syncwrite::server
