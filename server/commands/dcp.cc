// DCP_OPEN, DCP_SEQNO_ACKNOWLEDGED: an external replica's side of a producer
// stream, reduced to what durability needs (the replica says which prepares
// it holds). GET_ALL_VB_SEQNOS: where each vbucket's stream stands — for a
// replica that is not streamed the prepares, the seqnos it may acknowledge.
//
// DCP_SEQNO_ACKNOWLEDGED answers nothing on success, as kv_engine's producer
// does (docs/dcp/documentation/commands/seqno-acknowledged.md), only its
// errors.
#include <string>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/protocol/command_values.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

Disposition dcpOpen(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  const std::string node(request.key);
  if ((request.dcp_flags & protocol::kDcpOpenProducer) == 0) {
    answerError(context, Status::kEinval,
                "DCP_OPEN: only producer connections are supported (a "
                "replica opens one to receive prepares and acknowledge them)");
    return Disposition::kAnswered;
  }
  const durability::ReplicationTopology topology = bucket->durability().topology();
  if (node == topology.active() || !topology.contains(node)) {
    answerError(
        context, Status::kEinval,
        absl::StrCat("DCP_OPEN: '", node, "' is not a replica of bucket '", bucket->name(), "'"));
    return Disposition::kAnswered;
  }
  context.session.dcp_replica = node;
  context.session.dcp_bucket = bucket;
  protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  return Disposition::kAnswered;
}

Disposition seqnoAcknowledged(CommandContext& context) {
  const protocol::Request& request = context.request;
  Session& session = context.session;
  if (session.dcp_bucket == nullptr) {
    answerError(context, Status::kEinval,
                "DCP_SEQNO_ACKNOWLEDGED needs DCP_OPEN on this connection");
    return Disposition::kAnswered;
  }
  if (!session.dcp_bucket->seqnoAcknowledged(request.vbucket, session.dcp_replica,
                                             request.prepared_seqno)) {
    answerNotMyVbucket(context);
  }
  return Disposition::kAnswered;
}

// Every vbucket of the selected bucket in the asked state, sorted by id, with
// its high seqno: the last seqno queued — mutation, prepare, commit or abort.
// The high seqno is read after the state, without a lock across both: a
// vbucket that changes state meanwhile is reported as it was, as any answer
// about a moving vbucket is.
Disposition getAllVbSeqnos(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  const uint32_t filter = request.vbucket_state_filter;
  std::string value;
  const vbucket::VBucketMap& vbuckets = bucket->vbuckets();
  for (size_t id = 0; id < vbuckets.size(); ++id) {
    const vbucket::VBucket& vb = vbuckets.at(static_cast<vbucket::Vbid>(id));
    const vbucket::VBucketState state = vb.state();
    const bool wanted = filter == 0
                            ? state != vbucket::VBucketState::kDead
                            : state == vbucketStateFor(static_cast<protocol::VbucketState>(filter));
    if (wanted) protocol::appendVbSeqno(value, {static_cast<uint16_t>(id), vb.highSeqno()});
  }
  protocol::appendResponse(context.out, {.opcode = request.opcode,
                                         .status = Status::kSuccess,
                                         .opaque = request.opaque,
                                         .value = value});
  return Disposition::kAnswered;
}

}  // namespace

void addDcpCommands(CommandTable& table) {
  table[static_cast<uint8_t>(Opcode::kDcpOpen)] = {&dcpOpen};
  table[static_cast<uint8_t>(Opcode::kDcpSeqnoAcknowledged)] = {&seqnoAcknowledged};
  table[static_cast<uint8_t>(Opcode::kGetAllVbSeqnos)] = {&getAllVbSeqnos};
}

}  // namespace syncwrite::server::commands
