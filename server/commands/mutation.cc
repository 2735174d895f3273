// SET, ADD, REPLACE, DELETE.
//
// A write the durability layer commits at once is answered here; a SyncWrite
// it accepts (kPending) is answered by its completion, through a LateReply,
// when it commits (Success with the write's CAS) or is aborted
// (SyncWriteAmbiguous 0xa3 with the reason). Only a write that may become a
// SyncWrite builds a completion: a plain SET costs no closure.
//
// A request CAS makes SET, REPLACE and DELETE conditional: KeyExists 0x02
// when the stored CAS differs, KeyNotFound 0x01 when there is no item; ADD
// with a CAS is Einval (it has nothing to compare with). Flags, expiry and
// the datatype bit (JSON) are stored with the value.
//
// With MutationSeqno negotiated, a Success carries 16 bytes of extras: the
// vbucket's uuid and the seqno at which the write became visible — for a
// SyncWrite, its commit's seqno (not the prepare's): a reader that waits for
// that seqno is sure to see the committed value.
#include <optional>
#include <string>
#include <utility>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/dispatcher.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
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

// The Success of a mutation: its CAS, and with MutationSeqno the extras.
void appendSuccess(std::string& out, Opcode opcode, uint32_t opaque, uint64_t cas,
                   std::optional<uint64_t> vbucket_uuid, uint64_t seqno) {
  std::string extras;
  if (vbucket_uuid) {
    protocol::wire::append64(extras, *vbucket_uuid);
    protocol::wire::append64(extras, seqno);
  }
  protocol::appendResponse(out, {.opcode = opcode,
                                 .status = Status::kSuccess,
                                 .opaque = opaque,
                                 .cas = cas,
                                 .extras = extras});
}

// Answers a resolved SyncWrite through `late`.
durability::Completion completionFor(LateReply late, Opcode opcode, uint32_t opaque,
                                     std::optional<uint64_t> vbucket_uuid) {
  return [late = std::move(late), opcode, opaque,
          vbucket_uuid](const durability::Resolution& resolution) {
    std::string response;
    if (resolution.committed) {
      appendSuccess(response, opcode, opaque, resolution.cas, vbucket_uuid,
                    resolution.resolution_seqno);
    } else {
      protocol::appendErrorResponse(
          response, opcode, Status::kSyncWriteAmbiguous, opaque,
          absl::StrCat("SyncWrite ambiguous: ",
                       std::string(durability::toString(resolution.reason))));
    }
    late(std::move(response));
  };
}

Disposition mutate(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  if (request.cas != 0 && request.opcode == Opcode::kAdd) {
    answerError(context, Status::kEinval, "ADD takes no CAS (there is no item to compare with)");
    return Disposition::kAnswered;
  }
  const uint32_t now = unixNow();
  durability::WriteRequest write;
  write.op = writeOpFor(request.opcode);
  write.key = std::string(request.key);
  if (write.op != durability::WriteOp::kDelete) {
    write.value = std::string(request.value);
    write.meta.flags = request.flags;
    write.meta.expiry = absoluteExpiry(request.expiry, now);
    write.meta.datatype = request.datatype & protocol::kDatatypeJson;
  }
  write.cas = Dispatcher::nextCas();
  write.expected_cas = request.cas;
  write.unix_now = now;
  write.durability = request.durability;

  std::optional<uint64_t> vbucket_uuid;
  if (context.session.mutation_seqno) vbucket_uuid = bucket->vbucketUuid(request.vbucket);
  durability::Completion completion;
  if (bucket->durability().mayPend(write)) {
    completion = completionFor(context.defer(), request.opcode, request.opaque, vbucket_uuid);
  }
  const uint64_t cas = write.cas;
  const durability::WriteResult result =
      bucket->write(request.vbucket, std::move(write), std::move(completion));
  switch (result.status) {
    case durability::WriteStatus::kPending:
      return Disposition::kDeferred;
    case durability::WriteStatus::kCommitted:
      appendSuccess(context.out, request.opcode, request.opaque, cas, vbucket_uuid, result.seqno);
      break;
    case durability::WriteStatus::kNotActive:
      answerNotMyVbucket(context);
      break;
    default:
      answerError(context, statusFor(result.status),
                  std::string(durability::toString(result.status)));
      break;
  }
  return Disposition::kAnswered;
}

}  // namespace

void addMutationCommands(CommandTable& table) {
  for (Opcode opcode : {Opcode::kSet, Opcode::kAdd, Opcode::kReplace, Opcode::kDelete}) {
    table[static_cast<uint8_t>(opcode)] = {&mutate};
  }
}

}  // namespace syncwrite::server::commands
