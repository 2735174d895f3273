// GET_CLUSTER_CONFIG (0xb5) and GET_ERROR_MAP (0xfe): what an SDK asks at
// bootstrap to learn where vbuckets live and what each status means.
//
// The error map follows kv_engine docs/ErrorMap.md: {"version", "revision",
// "errors": {"<hex status>": {"name", "desc", "attrs": [...]}}}, one entry
// per status this server can answer, with the attributes of kv_engine's
// error_map_v2.json (protocol/status.h). As kv_engine's ErrorMapManager
// answers: version 0 is KeyNotFound (there is no such map); 1 is the map as
// version 1, revision 4 + the v2 revision (all of these attributes exist in
// version 1); 2 and above get version 2. The retry specifications version 2
// allows are left out, as kv_engine's own map has none.
#include <string>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <nlohmann/json.hpp>

#include "server/cluster_map.h"
#include "server/commands/families.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

// kv_engine's error_map_v2.json revision whose attributes protocol/status.cc
// carries, and the revision its v2to1() gives the version 1 map.
constexpr int kErrorMapRevision = 9;
constexpr int kVersion1Revision = 4 + kErrorMapRevision;
constexpr uint16_t kMaxErrorMapVersion = 2;

std::string errorMapJson(uint16_t version) {
  nlohmann::json errors = nlohmann::json::object();
  for (Status status : protocol::allStatuses()) {
    nlohmann::json attrs = nlohmann::json::array();
    const std::string text(protocol::errorMapAttributes(status));
    for (absl::string_view attr : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
      attrs.push_back(std::string(attr));
    }
    errors[absl::StrCat(absl::Hex(static_cast<uint16_t>(status)))] = {
        {"name", std::string(protocol::toString(status))},
        {"desc", std::string(protocol::describe(status))},
        {"attrs", std::move(attrs)}};
  }
  const nlohmann::json map = {{"version", version},
                              {"revision", version == 1 ? kVersion1Revision : kErrorMapRevision},
                              {"errors", std::move(errors)}};
  return map.dump();
}

Disposition getErrorMap(CommandContext& context) {
  const uint16_t asked = protocol::wire::load16(context.request.value, 0);
  if (asked == 0) {
    answerError(context, Status::kKeyNotFound, {});
    return Disposition::kAnswered;
  }
  const uint16_t version = asked < kMaxErrorMapVersion ? asked : kMaxErrorMapVersion;
  answerJson(context, Status::kSuccess, errorMapJson(version));
  return Disposition::kAnswered;
}

Disposition getClusterConfig(CommandContext& context) {
  const Bucket* bucket = context.session.bucket;
  answerJson(context, Status::kSuccess,
             bucket != nullptr ? bucketConfigJson(*bucket, context.server)
                               : clusterConfigJson(context.server));
  return Disposition::kAnswered;
}

}  // namespace

void addClusterCommands(CommandTable& table) {
  table[static_cast<uint8_t>(Opcode::kGetErrorMap)] = {&getErrorMap, false};
  table[static_cast<uint8_t>(Opcode::kGetClusterConfig)] = {&getClusterConfig};
}

}  // namespace syncwrite::server::commands
