// GET, GETK, GETQ, GETKQ, GET_META, GET_REPLICA, TOUCH, GAT, GATQ.
//
// A value with xattrs is answered without them (the body only, datatype
// without XATTR), as kv_engine's GET; sub-document lookups read them.
//
// GETK and GETKQ answer the key beside the value; GETQ, GETKQ and GATQ answer
// nothing on a miss (memcached's quiet reads, for a pipeline ended by NOOP;
// kv_engine's GatCommandContext the same for GATQ).
//
// An item whose expiry has passed is absent to every read (KeyNotFound 0x01).
// TOUCH and GAT change an item's expiry: they write the item again with the
// same value and flags, a new CAS and seqno, on the condition that its CAS has
// not changed since it was read (a concurrent write wins; the touch is
// retried against the new item a few times, then answered Etmpfail 0x86,
// which SDKs retry).
#include <string>

#include "server/commands/families.h"
#include "server/dispatcher.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/response_encoder.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr int kTouchAttempts = 8;

// A miss: KeyNotFound, or nothing for a quiet read (GETQ, GETKQ, GATQ).
void answerMiss(CommandContext& context) {
  if (!protocol::isQuiet(context.request.opcode)) {
    answerError(context, Status::kKeyNotFound, {});  // no body, as kv_engine
  }
}

// The live committed item of the request's key, or null after answering.
vbucket::QueuedItem liveItem(CommandContext& context, vbucket::VBucket& vb, uint32_t now) {
  vbucket::QueuedItem item = vb.hashTable().find(context.request.key);
  if (item == nullptr || item->expiredAt(now)) {
    answerMiss(context);
    return nullptr;
  }
  return item;
}

// A value answer (GET, GETK, GAT): 4-byte flags extras, the key for GETK and
// GETKQ, the item's datatype masked by what the session negotiated.
void answerValue(CommandContext& context, const vbucket::Item& item, uint64_t cas) {
  const Opcode loud = protocol::unquiet(context.request.opcode);
  const std::string_view key = loud == Opcode::kGetK ? context.request.key : std::string_view();
  std::string extras;
  protocol::wire::append32(extras, item.meta.flags);
  std::string_view body = item.value();
  uint8_t datatype = item.meta.datatype;
  if (!subdoc::stripXattrs(item.value(), item.meta.datatype, body, datatype)) {
    answerError(context, Status::kInternalError, "the stored xattr section is malformed");
    return;
  }
  if (!context.session.json) datatype = protocol::kDatatypeRaw;
  protocol::appendResponse(context.out, {.opcode = context.request.opcode,
                                         .status = Status::kSuccess,
                                         .opaque = context.request.opaque,
                                         .cas = cas,
                                         .datatype = datatype,
                                         .extras = extras,
                                         .key = key,
                                         .value = body});
}

// True, having answered SyncWriteReCommitInProgress, while a promoted
// replica's prepare of the key awaits its new majority: its value may or may
// not be the committed one yet (kv_engine's PreparedMaybeVisible, which
// VBucket::getInternal and getMetaData answer so; TOUCH and GAT meet the
// pending write as SyncWriteInProgress, as kv_engine's getAndUpdateTtl).
bool answeredReCommitting(CommandContext& context, const vbucket::VBucket& vb) {
  if (!currentBucket(context)->durability().reCommitInProgress(vb.id(), context.request.key)) {
    return false;
  }
  answerError(context, Status::kSyncWriteReCommitInProgress, {});
  return true;
}

Disposition get(CommandContext& context) {
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr || answeredReCommitting(context, *vb)) return Disposition::kAnswered;
  vbucket::QueuedItem item = liveItem(context, *vb, unixNow());
  if (item != nullptr) answerValue(context, *item, item->cas);
  return Disposition::kAnswered;
}

// GET_REPLICA (0x83): a GET of the copy this node holds as a replica of the
// vbucket (the SDK's getAnyReplica / getAllReplicas send it to each replica
// node of the key's chain); NotMyVbucket when the vbucket is not a replica
// here, as kv_engine answers.
Disposition getReplica(CommandContext& context) {
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  vbucket::VBucket* vb = bucket->vbuckets().get(context.request.vbucket);
  if (vb == nullptr || vb->state() != vbucket::VBucketState::kReplica) {
    answerNotMyVbucket(context);
    return Disposition::kAnswered;
  }
  vbucket::QueuedItem item = liveItem(context, *vb, unixNow());
  if (item != nullptr) answerValue(context, *item, item->cas);
  return Disposition::kAnswered;
}

// Extras of the answer (kv_engine docs/BinaryProtocol.md, GET_META): deleted
// (always 0: a deleted key is absent here), flags, expiry, seqno (the seqno
// at which the value was committed: a SyncWrite's commit, not its prepare, as
// kv_engine's committed item carries; kv_engine sends its revision seqno),
// and with version 2 the datatype.
Disposition getMeta(CommandContext& context) {
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr || answeredReCommitting(context, *vb)) return Disposition::kAnswered;
  vbucket::QueuedItem item = liveItem(context, *vb, unixNow());
  if (item == nullptr) return Disposition::kAnswered;
  std::string extras;
  protocol::wire::append32(extras, 0);
  protocol::wire::append32(extras, item->meta.flags);
  protocol::wire::append32(extras, item->meta.expiry);
  protocol::wire::append64(extras, vbucket::committedSeqno(*item));
  const std::string_view version = context.request.extras;
  if (version.size() == 1 && version[0] == 2)
    extras.push_back(static_cast<char>(item->meta.datatype));
  protocol::appendResponse(context.out, {.opcode = context.request.opcode,
                                         .status = Status::kSuccess,
                                         .opaque = context.request.opaque,
                                         .cas = item->cas,
                                         .extras = extras});
  return Disposition::kAnswered;
}

// TOUCH and GAT: rewrite the item with the new expiry (see the file comment).
Disposition touch(CommandContext& context) {
  const protocol::Request& request = context.request;
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr) return Disposition::kAnswered;
  Bucket& bucket = *currentBucket(context);  // activeVbucket() found one
  for (int attempt = 0; attempt < kTouchAttempts; ++attempt) {
    const uint32_t now = unixNow();
    vbucket::QueuedItem item = liveItem(context, *vb, now);
    if (item == nullptr) return Disposition::kAnswered;
    durability::WriteRequest write;
    write.op = durability::WriteOp::kSet;
    write.key = request.key;
    write.value = item->value();  // `item` holds the value until the write returns
    write.cas = Dispatcher::nextCas();
    write.expected_cas = item->cas;
    write.meta = item->meta;
    write.meta.expiry = absoluteExpiry(request.expiry, now);
    write.unix_now = now;
    if (bucket.durability().mayPend(write)) {
      // durability_min_level makes every write a SyncWrite; a touch that
      // would wait is refused rather than answered twice.
      answerError(context, Status::kNotSupported,
                  "TOUCH/GAT while durability_min_level is above none is not supported");
      return Disposition::kAnswered;
    }
    const uint64_t cas = write.cas;
    const durability::WriteResult result = bucket.write(request.vbucket, write, {});
    switch (result.status) {
      case durability::WriteStatus::kCommitted:
        if (protocol::unquiet(request.opcode) == Opcode::kGat) {
          answerValue(context, *item, cas);
        } else {
          protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess,
                                         request.opaque, cas);
        }
        return Disposition::kAnswered;
      case durability::WriteStatus::kKeyExists:  // the CAS moved: read again
        continue;
      case durability::WriteStatus::kKeyNotFound:
        answerMiss(context);
        return Disposition::kAnswered;
      case durability::WriteStatus::kSyncWriteInProgress:
        answerError(context, Status::kSyncWriteInProgress, {});
        return Disposition::kAnswered;
      case durability::WriteStatus::kNotActive:
        answerNotMyVbucket(context);
        return Disposition::kAnswered;
      case durability::WriteStatus::kTemporaryFailure:
        answerError(context, Status::kEtmpfail, memoryFullMessage(bucket));
        return Disposition::kAnswered;
      default:
        answerError(context, Status::kInternalError,
                    std::string(durability::toString(result.status)));
        return Disposition::kAnswered;
    }
  }
  answerError(context, Status::kEtmpfail, "the item kept changing under TOUCH; retry");
  return Disposition::kAnswered;
}

}  // namespace

void addRetrievalCommands(CommandTable& table) {
  for (Opcode opcode : {Opcode::kGet, Opcode::kGetK, Opcode::kGetQ, Opcode::kGetKQ}) {
    table[static_cast<uint8_t>(opcode)] = {&get};
  }
  table[static_cast<uint8_t>(Opcode::kGetMeta)] = {&getMeta};
  table[static_cast<uint8_t>(Opcode::kGetReplica)] = {&getReplica};
  table[static_cast<uint8_t>(Opcode::kTouch)] = {&touch};
  table[static_cast<uint8_t>(Opcode::kGat)] = {&touch};
  table[static_cast<uint8_t>(Opcode::kGatQ)] = {&touch};
}

}  // namespace syncwrite::server::commands
