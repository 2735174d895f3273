// SET, ADD, REPLACE, DELETE.
//
// A write the durability layer commits at once is answered here; a SyncWrite
// it accepts (kPending) is answered by its completion, through a LateReply,
// when it commits (Success with the write's CAS) or is aborted
// (SyncWriteAmbiguous 0xa3 with the reason). Only a write that may become a
// SyncWrite builds a completion: a plain SET costs no closure.
#include <string>
#include <utility>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/dispatcher.h"
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

// Answers a resolved SyncWrite through `late`.
durability::Completion completionFor(LateReply late, Opcode opcode, uint32_t opaque) {
  return [late = std::move(late), opcode, opaque](const durability::Resolution& resolution) {
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
}

Disposition mutate(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  if (request.cas != 0) {
    protocol::appendErrorResponse(context.out, request.opcode, Status::kNotSupported,
                                  request.opaque,
                                  "compare-and-swap (a request CAS) is not supported");
    return Disposition::kAnswered;
  }
  durability::WriteRequest write;
  write.op = writeOpFor(request.opcode);
  write.key = std::string(request.key);
  if (write.op != durability::WriteOp::kDelete) write.value = std::string(request.value);
  write.cas = Dispatcher::nextCas();
  write.durability = request.durability;

  durability::Completion completion;
  if (bucket->durability().mayPend(write)) {
    completion = completionFor(context.defer(), request.opcode, request.opaque);
  }
  const uint64_t cas = write.cas;
  const durability::WriteResult result =
      bucket->write(request.vbucket, std::move(write), std::move(completion));
  switch (result.status) {
    case durability::WriteStatus::kPending:
      return Disposition::kDeferred;
    case durability::WriteStatus::kCommitted:
      protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess,
                                     request.opaque, cas);
      break;
    case durability::WriteStatus::kNotActive:
      answerNotMyVbucket(context);
      break;
    default:
      protocol::appendErrorResponse(context.out, request.opcode, statusFor(result.status),
                                    request.opaque, std::string(durability::toString(result.status)));
      break;
  }
  return Disposition::kAnswered;
}

}  // namespace

void addMutationCommands(CommandTable& table) {
  for (Opcode opcode : {Opcode::kSet, Opcode::kAdd, Opcode::kReplace, Opcode::kDelete}) {
    table[static_cast<uint8_t>(opcode)] = &mutate;
  }
}

}  // namespace syncwrite::server::commands
