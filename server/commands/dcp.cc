// The producer side of DCP: DCP_OPEN (producer), DCP_CONTROL, DCP_STREAM_REQ,
// DCP_CLOSE_STREAM and DCP_BUFFER_ACKNOWLEDGEMENT steer the connection's
// DcpProducer (dcp_producer.h), which streams this node's active vbuckets to
// a replica; DCP_SEQNO_ACKNOWLEDGED is that replica saying which prepares it
// holds. GET_ALL_VB_SEQNOS: where each vbucket's stream stands (an external
// replica that only acknowledges learns from it the seqnos it may ack).
//
// DCP_SEQNO_ACKNOWLEDGED answers nothing on success, as kv_engine's producer
// does (docs/dcp/documentation/commands/seqno-acknowledged.md), only its
// errors.
#include <string>

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "server/commands/families.h"
#include "server/dcp_producer.h"
#include "server/log.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/command_values.h"
#include "server/protocol/dcp_messages.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

// The replica a DCP_OPEN names: its value's consumer_name (kv_engine's
// consumer sends {"consumer_name": ...}), else the connection name (the key).
std::string consumerOf(const protocol::Request& request) {
  if (!request.value.empty()) {
    const nlohmann::json value = nlohmann::json::parse(request.value, nullptr, false);
    if (value.is_object() && value.contains("consumer_name") &&
        value["consumer_name"].is_string()) {
      return value["consumer_name"].get<std::string>();
    }
  }
  return std::string(request.key);
}

Disposition dcpOpen(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  if ((request.dcp_flags & protocol::kDcpOpenProducer) == 0) {
    answerError(context, Status::kEinval,
                "DCP_OPEN: only producer connections are supported (a "
                "replica opens one to receive prepares and acknowledge them)");
    return Disposition::kAnswered;
  }
  const std::string node = consumerOf(request);
  const bool known = context.server.cluster ? node != context.server.node_name &&
                                                  context.server.cluster->find(node) != nullptr
                                            : node != bucket->durability().topology().active() &&
                                                  bucket->durability().topology().contains(node);
  if (!known) {
    answerError(
        context, Status::kEinval,
        absl::StrCat("DCP_OPEN: '", node, "' is not a replica of bucket '", bucket->name(), "'"));
    return Disposition::kAnswered;
  }
  Session& session = context.session;
  if (session.dcp_producer) session.dcp_producer->stop();
  session.dcp_replica = node;
  session.dcp_bucket = bucket;
  session.dcp_producer = std::make_shared<DcpProducer>(
      *bucket, std::string(request.key), node,
      session.dcp_wake ? session.dcp_wake : std::function<void()>([] {}));
  protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  return Disposition::kAnswered;
}

// The connection's producer, or null after answering Einval.
DcpProducer* producerOf(CommandContext& context) {
  if (context.session.dcp_producer) return context.session.dcp_producer.get();
  answerError(context, Status::kEinval,
              absl::StrCat(std::string(protocol::toString(context.request.opcode)),
                           " needs DCP_OPEN (as a producer) on this connection"));
  return nullptr;
}

Disposition dcpControl(CommandContext& context) {
  DcpProducer* producer = producerOf(context);
  if (producer == nullptr) return Disposition::kAnswered;
  const protocol::Request& request = context.request;
  if (absl::Status s = producer->control(request.key, request.value); !s.ok()) {
    answerError(context, Status::kEinval, std::string(s.message()));
    return Disposition::kAnswered;
  }
  if (request.key == "consumer_name") context.session.dcp_replica = std::string(request.value);
  protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  return Disposition::kAnswered;
}

Disposition streamRequest(CommandContext& context) {
  DcpProducer* producer = producerOf(context);
  if (producer == nullptr) return Disposition::kAnswered;
  const protocol::Request& request = context.request;
  const protocol::Request::StreamRequest& asked = request.stream_request;
  const DcpProducer::StreamAnswer answer =
      producer->streamRequest(request.vbucket, request.opaque,
                              {.start_seqno = asked.start_seqno,
                               .vbucket_uuid = asked.vbucket_uuid,
                               .snap_start_seqno = asked.snap_start_seqno,
                               .snap_end_seqno = asked.snap_end_seqno});
  switch (answer.outcome) {
    case DcpProducer::StreamAnswer::Outcome::kNotMyVbucket:
      answerNotMyVbucket(context);
      break;
    case DcpProducer::StreamAnswer::Outcome::kExists:
      answerError(context, Status::kKeyExists,
                  absl::StrCat("DCP_STREAM_REQ: vbucket ", request.vbucket,
                               " already has a stream on this connection"));
      break;
    case DcpProducer::StreamAnswer::Outcome::kRollback: {
      logLine(absl::StrCat("DCP \"", producer->consumer(), "\": vbucket ", request.vbucket,
                           " from seqno ", asked.start_seqno, " (uuid ", asked.vbucket_uuid,
                           ") must roll back to ", answer.rollback_seqno, ": ",
                           answer.rollback_reason));
      std::string seqno;
      protocol::wire::append64(seqno, answer.rollback_seqno);
      protocol::appendResponse(context.out, {.opcode = request.opcode,
                                             .status = Status::kRollback,
                                             .opaque = request.opaque,
                                             .value = seqno});
      break;
    }
    case DcpProducer::StreamAnswer::Outcome::kAccepted: {
      std::vector<protocol::FailoverEntry> entries;
      for (const vbucket::FailoverEntry& e : answer.failover_log) {
        entries.push_back({e.uuid, e.seqno});
      }
      const std::string log = protocol::encodeFailoverLog(entries);
      protocol::appendResponse(context.out, {.opcode = request.opcode,
                                             .status = Status::kSuccess,
                                             .opaque = request.opaque,
                                             .value = log});
      break;
    }
  }
  return Disposition::kAnswered;
}

Disposition closeStream(CommandContext& context) {
  DcpProducer* producer = producerOf(context);
  if (producer == nullptr) return Disposition::kAnswered;
  const protocol::Request& request = context.request;
  if (!producer->closeStream(request.vbucket)) {
    answerError(context, Status::kKeyNotFound,
                absl::StrCat("DCP_CLOSE_STREAM: vbucket ", request.vbucket, " has no stream"));
    return Disposition::kAnswered;
  }
  protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  return Disposition::kAnswered;
}

// Answers nothing, as kv_engine's producer (buffer-ack.md).
Disposition bufferAcknowledgement(CommandContext& context) {
  DcpProducer* producer = producerOf(context);
  if (producer != nullptr) producer->bufferAcknowledged(context.request.buffer_ack_bytes);
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
  } else if (session.dcp_producer) {
    session.dcp_producer->seqnoAcknowledged(request.vbucket, request.prepared_seqno);
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
  table[static_cast<uint8_t>(Opcode::kDcpControl)] = {&dcpControl};
  table[static_cast<uint8_t>(Opcode::kDcpStreamReq)] = {&streamRequest};
  table[static_cast<uint8_t>(Opcode::kDcpCloseStream)] = {&closeStream};
  table[static_cast<uint8_t>(Opcode::kDcpBufferAcknowledgement)] = {&bufferAcknowledgement};
}

}  // namespace syncwrite::server::commands
