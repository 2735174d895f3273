#include "server/dispatcher.h"

#include <atomic>
#include <chrono>
#include <utility>

#include <absl/strings/str_cat.h>

#include "server/protocol/feature.h"
#include "server/protocol/response_encoder.h"
#include "server/stats.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {
namespace {

using protocol::Opcode;
using protocol::Status;

// A durability::WriteStatus other than kPending as a protocol status.
Status statusFor(durability::WriteStatus status) {
  switch (status) {
    case durability::WriteStatus::kCommitted:
    case durability::WriteStatus::kPending:
      return Status::kSuccess;
    case durability::WriteStatus::kInvalidLevel:
      return Status::kDurabilityInvalidLevel;
    case durability::WriteStatus::kDurabilityImpossible:
      return Status::kDurabilityImpossible;
    case durability::WriteStatus::kSyncWriteInProgress:
      return Status::kSyncWriteInProgress;
    case durability::WriteStatus::kNotActive:
      return Status::kNotMyVbucket;
    case durability::WriteStatus::kKeyExists:
      return Status::kKeyExists;
    case durability::WriteStatus::kKeyNotFound:
      return Status::kKeyNotFound;
  }
  return Status::kInternalError;
}

durability::WriteOp writeOpFor(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
      return durability::WriteOp::kAdd;
    case Opcode::kReplace:
      return durability::WriteOp::kReplace;
    case Opcode::kDelete:
      return durability::WriteOp::kDelete;
    default:
      return durability::WriteOp::kSet;
  }
}

vbucket::VBucketState stateFor(protocol::VbucketState state) {
  switch (state) {
    case protocol::VbucketState::kActive:
      return vbucket::VBucketState::kActive;
    case protocol::VbucketState::kReplica:
      return vbucket::VBucketState::kReplica;
    case protocol::VbucketState::kPending:
      return vbucket::VBucketState::kPending;
    case protocol::VbucketState::kDead:
      break;
  }
  return vbucket::VBucketState::kDead;
}

void noBucket(const protocol::Request& request, std::string& out) {
  protocol::appendErrorResponse(out, request.opcode, Status::kNoBucket, request.opaque,
                                "no bucket selected: send SELECT_BUCKET first");
}

void notMyVbucket(const protocol::Request& request, std::string& out) {
  protocol::appendErrorResponse(out, request.opcode, Status::kNotMyVbucket, request.opaque,
                                absl::StrCat("vbucket ", request.vbucket, " is not active here"));
}

// The active vbucket of the request, or null (after answering NotMyVbucket).
vbucket::VBucket* activeVbucket(const protocol::Request& request, Bucket& bucket,
                                std::string& out) {
  vbucket::VBucket* vb = bucket.vbuckets().get(request.vbucket);
  if (vb == nullptr || vb->state() != vbucket::VBucketState::kActive) {
    notMyVbucket(request, out);
    return nullptr;
  }
  return vb;
}

}  // namespace

uint64_t Dispatcher::nextCas() noexcept {
  static std::atomic<uint64_t> last{0};
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  uint64_t prev = last.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    next = now > prev ? now : prev + 1;
  } while (!last.compare_exchange_weak(prev, next, std::memory_order_relaxed));
  return next;
}

Disposition Dispatcher::execute(const protocol::Request& request, Session& session,
                                std::string& out, const std::function<LateReply()>& defer) {
  const uint32_t opaque = request.opaque;
  switch (request.opcode) {
    case Opcode::kSet:
    case Opcode::kAdd:
    case Opcode::kReplace:
    case Opcode::kDelete:
      return mutate(request, session, out, defer);
    case Opcode::kGet:
      get(request, session, out);
      break;
    case Opcode::kHello:
      protocol::appendHelloResponse(out, opaque, protocol::negotiateFeatures(request.value));
      break;
    case Opcode::kSelectBucket:
      if (Bucket* bucket = context_.findBucket(request.key); bucket != nullptr) {
        session.bucket = bucket;
        protocol::appendStatusResponse(out, request.opcode, Status::kSuccess, opaque);
      } else {
        protocol::appendErrorResponse(
            out, request.opcode, Status::kKeyNotFound, opaque,
            absl::StrCat("no bucket named '", std::string(request.key), "'"));
      }
      break;
    case Opcode::kNoop:
      protocol::appendStatusResponse(out, request.opcode, Status::kSuccess, opaque);
      break;
    case Opcode::kVersion:
      protocol::appendVersionResponse(out, opaque, kServerVersion);
      break;
    case Opcode::kQuit:
      protocol::appendStatusResponse(out, request.opcode, Status::kSuccess, opaque);
      return Disposition::kClose;
    case Opcode::kStat:
      stat(request, session, out);
      break;
    case Opcode::kSetParam:
      setParam(request, session, out);
      break;
    case Opcode::kSetVbucket:
      setVbucket(request, session, out);
      break;
    case Opcode::kDcpOpen:
      dcpOpen(request, session, out);
      break;
    case Opcode::kDcpSeqnoAcknowledged:
      seqnoAcknowledged(request, session, out);
      break;
    default:
      // parseRequest refuses opcodes it does not know; this is a guard.
      protocol::appendErrorResponse(out, request.opcode, Status::kUnknownCommand, opaque,
                                    "unknown command");
      break;
  }
  return Disposition::kAnswered;
}

Disposition Dispatcher::mutate(const protocol::Request& request, Session& session, std::string& out,
                               const std::function<LateReply()>& defer) {
  if (session.bucket == nullptr) {
    noBucket(request, out);
    return Disposition::kAnswered;
  }
  if (request.cas != 0) {
    protocol::appendErrorResponse(out, request.opcode, Status::kNotSupported, request.opaque,
                                  "compare-and-swap (a request CAS) is not supported");
    return Disposition::kAnswered;
  }
  durability::WriteRequest write;
  write.op = writeOpFor(request.opcode);
  write.key = std::string(request.key);
  if (write.op != durability::WriteOp::kDelete) write.value = std::string(request.value);
  write.cas = nextCas();
  write.durability = request.durability;

  const Opcode opcode = request.opcode;
  const uint32_t opaque = request.opaque;
  durability::Completion completion = [late = defer(), opcode,
                                       opaque](const durability::Resolution& resolution) {
    std::string response;
    if (resolution.committed) {
      protocol::appendStatusResponse(response, opcode, Status::kSuccess, opaque, resolution.cas);
    } else {
      protocol::appendErrorResponse(
          response, opcode, Status::kSyncWriteAmbiguous, opaque,
          absl::StrCat("SyncWrite ambiguous: ",
                       std::string(durability::toString(resolution.reason))));
    }
    late(std::move(response));
  };

  const uint64_t cas = write.cas;
  const durability::WriteResult result =
      session.bucket->write(request.vbucket, std::move(write), std::move(completion));
  switch (result.status) {
    case durability::WriteStatus::kPending:
      return Disposition::kDeferred;
    case durability::WriteStatus::kCommitted:
      protocol::appendStatusResponse(out, opcode, Status::kSuccess, opaque, cas);
      break;
    case durability::WriteStatus::kNotActive:
      notMyVbucket(request, out);
      break;
    default:
      protocol::appendErrorResponse(out, opcode, statusFor(result.status), opaque,
                                    std::string(durability::toString(result.status)));
      break;
  }
  return Disposition::kAnswered;
}

void Dispatcher::get(const protocol::Request& request, Session& session, std::string& out) {
  if (session.bucket == nullptr) return noBucket(request, out);
  vbucket::VBucket* vb = activeVbucket(request, *session.bucket, out);
  if (vb == nullptr) return;
  vbucket::QueuedItem item = vb->hashTable().find(request.key);
  if (item == nullptr) {
    protocol::appendErrorResponse(out, request.opcode, Status::kKeyNotFound, request.opaque,
                                  "no such key");
    return;
  }
  // Flags are not stored (the vbucket layer's items carry none): always 0.
  protocol::appendGetResponse(out, request.opaque, item->cas, 0, item->value);
}

void Dispatcher::stat(const protocol::Request& request, Session& session, std::string& out) {
  auto stats = collectStats(context_, session.bucket, request.key);
  if (!stats.ok()) {
    const Status status =
        absl::IsFailedPrecondition(stats.status()) ? Status::kNoBucket : Status::kKeyNotFound;
    protocol::appendErrorResponse(out, request.opcode, status, request.opaque,
                                  std::string(stats.status().message()));
    return;
  }
  for (const auto& [name, value] : *stats) {
    protocol::appendStatResponse(out, request.opaque, name, value);
  }
  protocol::appendStatEnd(out, request.opaque);
}

void Dispatcher::setParam(const protocol::Request& request, Session& session, std::string& out) {
  if (session.bucket == nullptr) return noBucket(request, out);
  // Every parameter type names a key of the bucket's configuration; the
  // durability layer listens for its own keys and applies them at once.
  const absl::Status status = session.bucket->config().setFromText(request.key, request.value);
  if (!status.ok()) {
    protocol::appendErrorResponse(out, request.opcode, Status::kEinval, request.opaque,
                                  std::string(status.message()));
    return;
  }
  protocol::appendStatusResponse(out, request.opcode, Status::kSuccess, request.opaque);
}

void Dispatcher::setVbucket(const protocol::Request& request, Session& session, std::string& out) {
  if (session.bucket == nullptr) return noBucket(request, out);
  vbucket::VBucket* vb = session.bucket->vbuckets().get(request.vbucket);
  if (vb == nullptr) {
    protocol::appendErrorResponse(
        out, request.opcode, Status::kNotMyVbucket, request.opaque,
        absl::StrCat("vbucket ", request.vbucket, " does not exist (the bucket has ",
                     session.bucket->vbuckets().size(), ")"));
    return;
  }
  // Listeners run here: leaving active answers the vbucket's SyncWrites ambiguous.
  vb->setState(stateFor(request.vbucket_state));
  protocol::appendStatusResponse(out, request.opcode, Status::kSuccess, request.opaque);
}

void Dispatcher::dcpOpen(const protocol::Request& request, Session& session, std::string& out) {
  if (session.bucket == nullptr) return noBucket(request, out);
  const std::string node(request.key);
  if ((request.dcp_flags & protocol::kDcpOpenProducer) == 0) {
    protocol::appendErrorResponse(out, request.opcode, Status::kEinval, request.opaque,
                                  "DCP_OPEN: only producer connections are supported (a "
                                  "replica opens one to receive prepares and acknowledge them)");
    return;
  }
  const durability::ReplicationTopology topology = session.bucket->durability().topology();
  if (node == topology.active() || !topology.contains(node)) {
    protocol::appendErrorResponse(
        out, request.opcode, Status::kEinval, request.opaque,
        absl::StrCat("DCP_OPEN: '", node, "' is not a replica of bucket '", session.bucket->name(),
                     "'"));
    return;
  }
  session.dcp_replica = node;
  session.dcp_bucket = session.bucket;
  protocol::appendStatusResponse(out, request.opcode, Status::kSuccess, request.opaque);
}

void Dispatcher::seqnoAcknowledged(const protocol::Request& request, Session& session,
                                   std::string& out) {
  if (session.dcp_bucket == nullptr) {
    protocol::appendErrorResponse(out, request.opcode, Status::kEinval, request.opaque,
                                  "DCP_SEQNO_ACKNOWLEDGED needs DCP_OPEN on this connection");
    return;
  }
  if (!session.dcp_bucket->seqnoAcknowledged(request.vbucket, session.dcp_replica,
                                             request.prepared_seqno)) {
    notMyVbucket(request, out);
  }
  // Success answers nothing.
}

}  // namespace syncwrite::server
