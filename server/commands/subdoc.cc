// The sub-document commands: the single-path lookups (SUBDOC_GET, EXISTS,
// GET_COUNT) and mutations (DICT_ADD .. COUNTER, REPLACE_BODY_WITH_XATTR),
// SUBDOC_MULTI_LOOKUP and SUBDOC_MULTI_MUTATION. The subdoc library computes
// every answer and the value to store; this file reads the item, stores the
// result and answers (kv_engine docs/SubDocument.md for the wire answers).
//
// Lookups read the committed item (a pending SyncWrite on the key does not
// hide it) and answer its CAS. A single-path lookup answers the spec's status
// and value; a multi-lookup answers Success or SubdocMultiPathFailure with one
// entry per spec (status u16, value length u32, value), or a single status
// without a body when the request could not run (KeyNotFound, Einval...).
//
// A mutation reads the item, lets the library compute the new value, and
// writes it on the condition that the item is unchanged (its CAS, or still
// absent for a created document): when another write won and the client sent
// no CAS, it reads again and retries a few times (then Etmpfail); with a
// client CAS the stored CAS must equal it (KeyExists otherwise, KeyNotFound
// when there is no item), and the Add doc flag with a CAS is Einval. The
// stored datatype is the library's (JSON, XATTR); the flags are the item's
// (0 for a created document); the expiry is the request's, or none when the
// request has no expiry field (as a SET stores). A durability frame makes the
// write a SyncWrite, answered when it commits or is ambiguous, exactly as
// mutation.cc's; a second SyncWrite on the key meanwhile is answered
// SyncWriteInProgress. Success carries the CAS, with MutationSeqno the vbucket
// uuid and seqno as extras, and COUNTER's new value (single path: the value;
// multi: entries of index u8, status u16, length u32, value). A failed spec
// of a multi-mutation stores nothing and answers SubdocMultiPathFailure with
// its index u8 and status u16.
//
// ${Mutation.CAS} is filled before the write (the server chooses the CAS);
// a mutation using ${Mutation.seqno} is answered NotSupported, because the
// vbucket assigns the seqno inside its write and offers no hook to fill it
// before the item becomes visible. Deletions store no tombstone here, so a
// whole-document DELETE removes the system xattrs too, AccessDeleted sees no
// document, and CreateAsDeleted is NotSupported. A durable multi-mutation
// with more than one COUNTER is NotSupported (a late answer carries one).
// Specs with XattrPath need HELLO XATTR (Einval without it).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/commands/write_answers.h"
#include "server/dispatcher.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/response_encoder.h"
#include "server/subdoc_request.h"
#include "subdoc/lookup.h"
#include "subdoc/mutation.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

constexpr int kSubdocWriteAttempts = 8;
// kv_engine's default max_item_size (20 MiB, its configuration.json): a
// mutation whose result is larger is refused with TooBig (E2big).
constexpr size_t kMaxItemSize = size_t{20} * 1024 * 1024;

Status wireStatus(subdoc::Status status) { return static_cast<Status>(status); }

template <typename Spec>
bool namesXattr(const std::vector<Spec>& specs) {
  for (const Spec& spec : specs) {
    if ((spec.flags & subdoc::path_flag::kXattrPath) != 0) return true;
  }
  return false;
}

// Answers Einval when a spec names an xattr on a connection without XATTR.
template <typename Spec>
bool refusedXattr(CommandContext& context, const std::vector<Spec>& specs) {
  if (context.session.xattr || !namesXattr(specs)) return false;
  answerError(context, Status::kEinval,
              "xattr paths need the XATTR feature (0x06) agreed in HELLO");
  return true;
}

// The live committed item of the request's key, or null.
vbucket::QueuedItem liveItem(const CommandContext& context, vbucket::VBucket& vb, uint32_t now) {
  vbucket::QueuedItem item = vb.hashTable().find(context.request.key);
  if (item != nullptr && item->expiredAt(now)) return nullptr;
  return item;
}

subdoc::DocumentMeta metaOf(const vbucket::Item& item, uint64_t vbucket_uuid) {
  const uint64_t seqno = vbucket::committedSeqno(item);
  return {.cas = item.cas,
          .vbucketUuid = vbucket_uuid,
          .seqno = seqno,
          .revid = seqno,  // no revision counter here: the seqno also grows with each write
          .exptime = item.meta.expiry,
          .flags = item.meta.flags,
          .datatype = item.meta.datatype,
          .deleted = false,
          .casIsHlc = true};  // Dispatcher::nextCas: real-time nanoseconds
}

std::optional<subdoc::Document> documentOf(const vbucket::Item* item) {
  if (item == nullptr) return std::nullopt;
  return subdoc::Document{.value = item->value(), .datatype = item->meta.datatype};
}

void appendEntryHeader(std::string& body, subdoc::Status status, size_t length) {
  protocol::wire::append16(body, static_cast<uint16_t>(status));
  protocol::wire::append32(body, static_cast<uint32_t>(length));
}

Disposition lookup(CommandContext& context) {
  const protocol::Request& request = context.request;
  const DecodedLookup decoded = decodeLookupSpecs(request);
  if (!decoded.error.empty()) {
    answerError(context, Status::kEinval, decoded.error);
    return Disposition::kAnswered;
  }
  if (refusedXattr(context, decoded.specs)) return Disposition::kAnswered;
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr) return Disposition::kAnswered;
  Bucket& bucket = *currentBucket(context);  // activeVbucket() found one
  if (bucket.durability().reCommitInProgress(vb->id(), request.key)) {
    answerError(context, Status::kSyncWriteReCommitInProgress, {});
    return Disposition::kAnswered;
  }
  const uint32_t now = unixNow();
  const vbucket::QueuedItem item = liveItem(context, *vb, now);
  subdoc::LookupContext lookup_context;
  if (item != nullptr) lookup_context.meta = metaOf(*item, bucket.vbucketUuid(request.vbucket));
  lookup_context.vbucket = {.exists = true, .hlcNowSeconds = now, .hlcReal = true};
  const subdoc::LookupOutcome outcome = subdoc::lookup(documentOf(item.get()), decoded.specs,
                                                       request.subdoc_doc_flags, lookup_context);
  const uint64_t cas = item != nullptr ? item->cas : 0;
  if (request.opcode != Opcode::kSubdocMultiLookup) {
    const subdoc::Status status = subdoc::singleLookupStatus(outcome);
    if (status != subdoc::Status::Success && status != subdoc::Status::SubdocSuccessDeleted) {
      answerError(context, wireStatus(status), {});
      return Disposition::kAnswered;
    }
    protocol::appendResponse(context.out, {.opcode = request.opcode,
                                           .status = wireStatus(status),
                                           .opaque = request.opaque,
                                           .cas = cas,
                                           .value = outcome.results.front().value});
    return Disposition::kAnswered;
  }
  if (outcome.results.empty()) {
    answerError(context, wireStatus(outcome.status), {});
    return Disposition::kAnswered;
  }
  std::string body;
  for (const subdoc::SpecResult& result : outcome.results) {
    appendEntryHeader(body, result.status, result.value.size());
    body += result.value;
  }
  protocol::appendResponse(context.out, {.opcode = request.opcode,
                                         .status = wireStatus(outcome.status),
                                         .opaque = request.opaque,
                                         .cas = cas,
                                         .value = body});
  return Disposition::kAnswered;
}

// A mutation the library refused: nothing is stored.
void answerMutationFailure(CommandContext& context, const subdoc::MutationOutcome& outcome) {
  const protocol::Request& request = context.request;
  if (request.opcode != Opcode::kSubdocMultiMutation) {
    answerError(context, wireStatus(subdoc::singleMutationStatus(outcome)), {});
    return;
  }
  if (outcome.status != subdoc::Status::SubdocMultiPathFailure &&
      outcome.status != subdoc::Status::SubdocMultiPathFailureDeleted) {
    answerError(context, wireStatus(outcome.status), {});
    return;
  }
  std::string body;
  body.push_back(static_cast<char>(outcome.failedIndex));
  protocol::wire::append16(body, static_cast<uint16_t>(outcome.failedStatus));
  protocol::appendResponse(context.out, {.opcode = request.opcode,
                                         .status = wireStatus(outcome.status),
                                         .opaque = request.opaque,
                                         .value = body});
}

// The Success answer of a mutation committed at once.
void answerMutationSuccess(CommandContext& context, const subdoc::MutationOutcome& outcome,
                           const LateAnswerShape& shape, uint64_t cas, uint64_t seqno) {
  const protocol::Request& request = context.request;
  std::string extras;
  if (shape.has_uuid) {
    protocol::wire::append64(extras, shape.vbucket_uuid);
    protocol::wire::append64(extras, seqno);
  }
  std::string body;
  for (const subdoc::IndexedValue& result : outcome.results) {
    if (request.opcode == Opcode::kSubdocMultiMutation) {
      body.push_back(static_cast<char>(result.index));
      appendEntryHeader(body, subdoc::Status::Success, result.value.size());
    }
    body += result.value;
  }
  protocol::appendResponse(context.out, {.opcode = request.opcode,
                                         .status = wireStatus(outcome.status),
                                         .opaque = request.opaque,
                                         .cas = cas,
                                         .extras = extras,
                                         .value = body});
}

bool usesSeqnoMacro(const subdoc::MutationOutcome& outcome) {
  for (const subdoc::PendingMacro& macro : outcome.macros) {
    if (macro.kind == subdoc::MacroKind::kSeqno) return true;
  }
  return false;
}

// The checks a mutation request gets before its item is read; true when it
// was answered.
bool refusedMutation(CommandContext& context, const std::vector<subdoc::MutationSpec>& specs) {
  const protocol::Request& request = context.request;
  if (refusedXattr(context, specs)) return true;
  if ((request.subdoc_doc_flags & subdoc::doc_flag::kAdd) != 0 && request.cas != 0) {
    answerError(context, Status::kEinval, "the Add doc flag takes no CAS");
    return true;
  }
  if ((request.subdoc_doc_flags & subdoc::doc_flag::kCreateAsDeleted) != 0) {
    answerError(context, Status::kNotSupported,
                "CreateAsDeleted is not supported: syncwrite-server keeps no tombstones");
    return true;
  }
  return false;
}

Disposition mutation(CommandContext& context) {
  const protocol::Request& request = context.request;
  const DecodedMutation decoded = decodeMutationSpecs(request);
  if (!decoded.error.empty()) {
    answerError(context, Status::kEinval, decoded.error);
    return Disposition::kAnswered;
  }
  if (refusedMutation(context, decoded.specs)) return Disposition::kAnswered;
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr) return Disposition::kAnswered;
  Bucket& bucket = *currentBucket(context);  // activeVbucket() found one
  std::optional<LateReply> late;
  for (int attempt = 0; attempt < kSubdocWriteAttempts; ++attempt) {
    const uint32_t now = unixNow();
    const vbucket::QueuedItem item = liveItem(context, *vb, now);
    if (request.cas != 0 && (item == nullptr || item->cas != request.cas)) {
      answerError(context, item == nullptr ? Status::kKeyNotFound : Status::kKeyExists, {});
      return Disposition::kAnswered;
    }
    subdoc::MutationContext mutation_context;
    if (item != nullptr) mutation_context.meta = metaOf(*item, bucket.vbucketUuid(request.vbucket));
    subdoc::MutationOutcome outcome = subdoc::mutate(documentOf(item.get()), decoded.specs,
                                                     request.subdoc_doc_flags, mutation_context);
    if (outcome.status != subdoc::Status::Success &&
        outcome.status != subdoc::Status::SubdocSuccessDeleted) {
      answerMutationFailure(context, outcome);
      return Disposition::kAnswered;
    }
    if (usesSeqnoMacro(outcome)) {
      answerError(context, Status::kNotSupported,
                  "${Mutation.seqno} is not supported: the vbucket assigns the seqno inside its "
                  "write, with no hook to fill the macro before the item is visible");
      return Disposition::kAnswered;
    }
    if (outcome.value.size() + request.key.size() > kMaxItemSize) {
      answerError(context, Status::kTooBig,
                  absl::StrCat("the document would be ", outcome.value.size(),
                               " bytes, over the item size limit of ", kMaxItemSize));
      return Disposition::kAnswered;
    }
    durability::WriteRequest write;
    write.cas = Dispatcher::nextCas();
    subdoc::fillMutationMacros(outcome.value, outcome.datatype, outcome.macros, write.cas, 0);
    write.key = request.key;
    if (outcome.deleted) {
      write.op = durability::WriteOp::kDelete;
    } else {
      write.op = item == nullptr ? durability::WriteOp::kAdd : durability::WriteOp::kSet;
      write.value = outcome.value;  // `outcome` outlives the write
      write.meta.flags = item != nullptr ? item->meta.flags : 0;
      write.meta.expiry = request.has_expiry ? absoluteExpiry(request.expiry, now) : 0;
      write.meta.datatype = outcome.datatype;
    }
    write.expected_cas = item != nullptr ? item->cas : 0;
    write.unix_now = now;
    write.durability = request.durability;
    if (!late && bucket.durability().mayPend(write)) {
      if (outcome.results.size() > 1) {
        answerError(context, Status::kNotSupported,
                    "a durable SUBDOC_MULTI_MUTATION with more than one COUNTER is not supported");
        return Disposition::kAnswered;
      }
      late = context.defer();
    }
    LateAnswerShape shape = shapeFor(context, bucket);
    if (!outcome.results.empty()) {
      shape.has_counter = true;
      shape.counter = static_cast<uint64_t>(std::stoll(outcome.results.front().value));
      shape.counter_index = outcome.results.front().index;
    }
    durability::Completion completion;
    if (late) completion = *late;
    const durability::WriteResult result =
        bucket.write(request.vbucket, write, std::move(completion));
    switch (result.status) {
      case durability::WriteStatus::kPending:
        context.late_shape = shape;
        return Disposition::kDeferred;
      case durability::WriteStatus::kCommitted:
        answerMutationSuccess(context, outcome, shape, write.cas, result.seqno);
        return Disposition::kAnswered;
      case durability::WriteStatus::kKeyExists:    // another write won: read again
      case durability::WriteStatus::kKeyNotFound:  // (the client sent no CAS)
        continue;
      default:
        answerWriteRefused(context, bucket, result.status);
        return Disposition::kAnswered;
    }
  }
  answerError(context, Status::kEtmpfail, "the document kept changing under the update; retry");
  return Disposition::kAnswered;
}

}  // namespace

void addSubdocCommands(CommandTable& table) {
  for (Opcode opcode : {Opcode::kSubdocGet, Opcode::kSubdocExists, Opcode::kSubdocGetCount,
                        Opcode::kSubdocMultiLookup}) {
    table[static_cast<uint8_t>(opcode)] = {&lookup};
  }
  for (Opcode opcode :
       {Opcode::kSubdocDictAdd, Opcode::kSubdocDictUpsert, Opcode::kSubdocDelete,
        Opcode::kSubdocReplace, Opcode::kSubdocArrayPushLast, Opcode::kSubdocArrayPushFirst,
        Opcode::kSubdocArrayInsert, Opcode::kSubdocArrayAddUnique, Opcode::kSubdocCounter,
        Opcode::kSubdocMultiMutation, Opcode::kSubdocReplaceBodyWithXattr}) {
    table[static_cast<uint8_t>(opcode)] = {&mutation};
  }
}

}  // namespace syncwrite::server::commands
