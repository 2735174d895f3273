// STAT, SET_PARAM, SET_VBUCKET, FLUSH, FLUSHQ.
//
// SET_VBUCKET may carry kv_engine's topology value, {"topology": [[...]]}: the
// vbucket's chain is set first; a replica made active with one is promoted
// (BucketDurability::promote: the prepares it held are re-committed, never
// timed out); a replica of a cluster whose chain names another active
// streams from that node from then on (ServerContext::replicate_from). A
// vbucket that becomes active adds a failover-log entry (Bucket::startNewHistory).
// One made active without a topology naming this node as its active refuses
// SyncWrites Etmpfail until one arrives (a promoted replica's prepares wait
// for it too). A vbucket that leaves active ends its DCP streams at once
// (STREAM_END StateChanged).
#include <optional>
#include <string>
#include <utility>

#include <absl/strings/str_cat.h>
#include <nlohmann/json.hpp>

#include "server/commands/families.h"
#include "server/log.h"
#include "server/protocol/response_encoder.h"
#include "server/stats.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

Disposition stat(CommandContext& context) {
  const protocol::Request& request = context.request;
  auto stats = collectStats(context.server, currentBucket(context), request.key);
  if (!stats.ok()) {
    const Status status = absl::IsFailedPrecondition(stats.status()) ? Status::kNoBucket
                          : absl::IsInvalidArgument(stats.status())  ? Status::kEinval
                                                                     : Status::kKeyNotFound;
    answerError(context, status, std::string(stats.status().message()));
    return Disposition::kAnswered;
  }
  for (const auto& [name, value] : *stats) {
    protocol::appendStatResponse(context.out, request.opaque, name, value);
  }
  protocol::appendStatEnd(context.out, request.opaque);
  return Disposition::kAnswered;
}

Disposition setParam(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  // Every parameter type names a key of the bucket's configuration; the
  // durability layer listens for its own keys and applies them at once.
  const absl::Status status = bucket->config().setFromText(request.key, request.value);
  if (!status.ok()) {
    answerError(context, Status::kEinval, std::string(status.message()));
    return Disposition::kAnswered;
  }
  protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  return Disposition::kAnswered;
}

Disposition setVbucket(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  vbucket::VBucket* vb = bucket->vbuckets().get(request.vbucket);
  if (vb == nullptr) {
    answerError(context, Status::kNotMyVbucket,
                absl::StrCat("vbucket ", request.vbucket, " does not exist (the bucket has ",
                             bucket->vbuckets().size(), ")"));
    return Disposition::kAnswered;
  }
  // kv_engine's SET_VBUCKET value: {"topology": [["active", "replica", null]]}.
  std::optional<durability::ReplicationTopology> topology;
  if (!request.value.empty()) {
    const nlohmann::json value = nlohmann::json::parse(request.value, nullptr, false);
    absl::StatusOr<durability::ReplicationTopology> parsed =
        value.is_object() && value.contains("topology")
            ? durability::ReplicationTopology::fromJson(value["topology"])
            : absl::InvalidArgumentError(
                  "the value must be a JSON object {\"topology\": [[\"active\", ...]]}");
    if (!parsed.ok()) {
      answerError(context, Status::kEinval,
                  absl::StrCat("SET_VBUCKET: ", std::string(parsed.status().message())));
      return Disposition::kAnswered;
    }
    topology = std::move(*parsed);
  }
  const vbucket::VBucketState state = vbucketStateFor(request.vbucket_state);
  // A vbucket that becomes active starts a history of its own (its failover
  // table's new entry), at its high seqno before anything it commits.
  const bool becomes_active =
      state == vbucket::VBucketState::kActive && vb->state() != vbucket::VBucketState::kActive;
  const std::string& me = context.server.node_name;
  if (state == vbucket::VBucketState::kActive && vb->state() == vbucket::VBucketState::kReplica) {
    // Without a value, the chain the vbucket keeps serves if it names this
    // node as the active (a single node's own chain); otherwise the prepares
    // wait for one. (promote() refuses a topology whose active is another node.)
    if (!topology) {
      durability::ReplicationTopology kept = bucket->durability().topology(request.vbucket);
      if (kept.active() == me) topology = std::move(kept);
    }
    if (!topology || topology->active() == me) bucket->startNewHistory(request.vbucket);
    const bool with_topology = topology.has_value();
    absl::StatusOr<size_t> taken =
        bucket->durability().promote(request.vbucket, me, std::move(topology));
    if (!taken.ok()) {
      answerError(context, Status::kEinval,
                  absl::StrCat("SET_VBUCKET: ", std::string(taken.status().message())));
      return Disposition::kAnswered;
    }
    logLine(absl::StrCat("bucket \"", bucket->name(), "\": vbucket ", request.vbucket,
                         " promoted to active; it re-commits the ", *taken,
                         " prepare(s) its replica copy held open",
                         with_topology ? "" : " once a SET_VBUCKET gives it a topology"));
  } else {
    // A replica whose chain names another active streams from that node now.
    const bool repoint = topology && state == vbucket::VBucketState::kReplica &&
                         context.server.replicate_from && topology->active() != me &&
                         topology->contains(me);
    const std::string new_active = repoint ? topology->active() : std::string();
    // Made active under a chain that names another active (kv_engine since
    // MB-70387): SyncWrites wait for the topology that names this node.
    const bool await_topology = becomes_active && !topology &&
                                bucket->durability().topology(request.vbucket).active() != me;
    if (topology) bucket->durability().setTopology(request.vbucket, std::move(*topology));
    if (await_topology) bucket->durability().awaitTopology(request.vbucket);
    if (becomes_active) bucket->startNewHistory(request.vbucket);
    // Listeners run here: leaving active answers the vbucket's SyncWrites ambiguous.
    vb->setState(state);
    // Its producer streams end now, not at the next item queued elsewhere.
    if (state != vbucket::VBucketState::kActive) bucket->wakeLogReaders(request.vbucket);
    if (repoint) context.server.replicate_from(*bucket, request.vbucket, new_active);
  }
  bucket->configChanged();
  protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  return Disposition::kAnswered;
}

// FLUSH (and FLUSHQ, which answers only a failure): empties the bucket when
// its flush_enabled is on. A delayed flush (a nonzero expiry in the extras)
// is refused: memcached's option, which kv_engine does not support either.
Disposition flush(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  if (!bucket->config().get(config::keys::kFlushEnabled)) {
    answerError(context, Status::kNotSupported,
                absl::StrCat("flush is disabled for bucket '", bucket->name(),
                             "' (set flush_enabled to true)"));
    return Disposition::kAnswered;
  }
  if (request.expiry != 0) {
    answerError(context, Status::kNotSupported, "a delayed flush is not supported");
    return Disposition::kAnswered;
  }
  bucket->durability().flush();
  if (!protocol::isQuiet(request.opcode)) {
    protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  }
  return Disposition::kAnswered;
}

}  // namespace

void addAdminCommands(CommandTable& table) {
  table[static_cast<uint8_t>(Opcode::kFlush)] = {&flush};
  table[static_cast<uint8_t>(Opcode::kFlushQ)] = {&flush};
  table[static_cast<uint8_t>(Opcode::kStat)] = {&stat};
  table[static_cast<uint8_t>(Opcode::kSetParam)] = {&setParam};
  table[static_cast<uint8_t>(Opcode::kSetVbucket)] = {&setVbucket};
}

}  // namespace syncwrite::server::commands
