// The mutations: SET, ADD, REPLACE, DELETE, and the read-modify-writes
// INCREMENT, DECREMENT, APPEND, PREPEND; each may be a SyncWrite.
//
// A write the durability layer commits at once is answered here; a SyncWrite
// it accepts (kPending) is answered when it commits (Success with the write's
// CAS) or is aborted (SyncWriteAmbiguous 0xa3 with the reason): its
// completion is the request's LateReply, and whoever holds the answer slot
// builds the answer from the LateAnswerShape left in the context
// (appendLateAnswer). Only a write that may become a SyncWrite takes a
// LateReply.
//
// A request CAS makes SET, REPLACE and DELETE conditional: KeyExists 0x02
// when the stored CAS differs, KeyNotFound 0x01 when there is no item; ADD
// with a CAS is Einval (it has nothing to compare with). Flags and expiry
// are stored with the value; the datatype is JSON exactly when the value is
// JSON (json_value.h), whatever the client marked it, as kv_engine decides
// it on SET and APPEND/PREPEND, and a counter is always JSON. The item-level
// refusals (KeyNotFound, KeyExists, NotStored, DeltaBadval,
// SyncWriteInProgress, DurabilityImpossible) carry no body, as kv_engine
// sets no error context for them.
//
// A DELETE's Success carries the deletion's CAS — or 0 for a connection that
// never sent HELLO, as memcached answers plain memcached clients.
//
// With MutationSeqno negotiated, a Success carries 16 bytes of extras: the
// vbucket's uuid and the seqno at which the write became visible — for a
// SyncWrite, its commit's seqno (not the prepare's): a reader that waits for
// that seqno is sure to see the committed value.
#include <array>
#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/commands/write_answers.h"
#include "server/dispatcher.h"
#include "server/json_value.h"
#include "server/parse_number.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/packet.h"
#include "server/protocol/response_encoder.h"
#include "subdoc/spec.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::server::commands {

using protocol::Opcode;
using protocol::Status;

void appendSuccess(std::string& out, const LateAnswerShape& shape, uint64_t cas, uint64_t seqno) {
  if (shape.quiet) return;
  // 16 bytes: on the stack, not in a string (which allocates above 15).
  std::array<char, 16> uuid_seqno{};
  std::string_view extras;
  if (shape.has_uuid) {
    protocol::wire::store64(uuid_seqno.data(), shape.vbucket_uuid);
    protocol::wire::store64(uuid_seqno.data() + 8, seqno);
    extras = {uuid_seqno.data(), uuid_seqno.size()};
  }
  const std::string value = counterAnswerValue(shape);
  protocol::appendResponse(out, {.opcode = shape.opcode,
                                 .status = Status::kSuccess,
                                 .opaque = shape.opaque,
                                 .cas = shape.zero_cas ? 0 : cas,
                                 .extras = extras,
                                 .value = value});
}

LateAnswerShape shapeFor(const CommandContext& context, const Bucket& bucket) {
  LateAnswerShape shape;
  shape.opcode = context.request.opcode;
  shape.opaque = context.request.opaque;
  shape.quiet = protocol::isQuiet(context.request.opcode);
  // A plain memcached client (no HELLO) gets memcached's DELETE answer, CAS
  // 0 (libmemcached's memcapable checks it); a Couchbase client gets the
  // deletion's CAS, as kv_engine sends it.
  shape.zero_cas =
      protocol::unquiet(context.request.opcode) == Opcode::kDelete && !context.session.said_hello;
  shape.json = context.session.json;
  shape.xerror = context.session.xerror;
  if (context.session.mutation_seqno) {
    shape.has_uuid = true;
    shape.vbucket_uuid = bucket.vbucketUuid(context.request.vbucket);
  }
  return shape;
}

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
    case durability::WriteStatus::kTemporaryFailure:
      return Status::kEtmpfail;
  }
  return Status::kInternalError;
}

std::string counterAnswerValue(const LateAnswerShape& shape) {
  std::string value;
  if (!shape.has_counter) return value;
  if (shape.opcode != Opcode::kSubdocCounter && shape.opcode != Opcode::kSubdocMultiMutation) {
    protocol::wire::append64(value, shape.counter);  // 8 bytes: no allocation
    return value;
  }
  const std::string text = std::to_string(static_cast<int64_t>(shape.counter));
  if (shape.opcode == Opcode::kSubdocMultiMutation) {
    value.push_back(static_cast<char>(shape.counter_index));
    protocol::wire::append16(value, static_cast<uint16_t>(Status::kSuccess));
    protocol::wire::append32(value, static_cast<uint32_t>(text.size()));
  }
  value += text;
  return value;
}

void answerWriteRefused(CommandContext& context, const Bucket& bucket,
                        durability::WriteStatus status) {
  switch (status) {
    case durability::WriteStatus::kNotActive:
      answerNotMyVbucket(context);
      break;
    case durability::WriteStatus::kTemporaryFailure:
      answerError(context, Status::kEtmpfail,
                  bucket.durability().awaitingTopology(context.request.vbucket)
                      ? absl::StrCat("vbucket ", context.request.vbucket,
                                     " is active without a replication topology that names "
                                     "this node; SyncWrites wait for SET_VBUCKET with one")
                      : memoryFullMessage(bucket));
      break;
    default:
      answerError(context, statusFor(status), {});
      break;
  }
}

namespace {

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

// The error context of an ambiguous answer for `reason`, built once: a
// timeout storm sends it hundreds of thousands of times.
const std::string& ambiguousContext(durability::AmbiguousReason reason) {
  using durability::AmbiguousReason;
  static const std::array<std::string, 5> contexts = [] {
    std::array<std::string, 5> built;
    for (const AmbiguousReason r :
         {AmbiguousReason::kTimeout, AmbiguousReason::kLeftActive, AmbiguousReason::kBucketDeleted,
          AmbiguousReason::kShutdown, AmbiguousReason::kFlushed}) {
      built[static_cast<size_t>(r)] = protocol::errorContext(
          absl::StrCat("SyncWrite ambiguous: ", std::string(durability::toString(r))));
    }
    return built;
  }();
  return contexts.at(static_cast<size_t>(reason));
}

// Sends `write` and answers it. `late`, when set, is the LateReply a
// SyncWrite answers through (taken once per request by the caller).
// kKeyExists is returned to the caller without answering when `retry_on_cas`
// (a read-modify-write whose item changed under it).
enum class Sent { kDone, kCasMoved };
Sent send(CommandContext& context, Bucket& bucket, durability::WriteRequest write,
          const LateAnswerShape& shape, const std::optional<LateReply>& late, bool retry_on_cas,
          Disposition& disposition) {
  const protocol::Request& request = context.request;
  durability::Completion completion;
  if (late) completion = *late;  // inline: no allocation (command.h)
  const uint64_t cas = write.cas;
  const durability::WriteResult result =
      bucket.write(request.vbucket, write, std::move(completion));
  disposition = Disposition::kAnswered;
  switch (result.status) {
    case durability::WriteStatus::kPending:
      context.late_shape = shape;
      disposition = Disposition::kDeferred;
      break;
    case durability::WriteStatus::kCommitted:
      appendSuccess(context.out, shape, cas, result.seqno);
      break;
    case durability::WriteStatus::kKeyExists:
      if (retry_on_cas) return Sent::kCasMoved;
      answerError(context, statusFor(result.status), {});
      break;
    default:
      answerWriteRefused(context, bucket, result.status);
      break;
  }
  return Sent::kDone;
}

Disposition mutate(CommandContext& context) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  const Opcode loud = protocol::unquiet(request.opcode);
  assert(loud != Opcode::kAdd || request.cas == 0);  // parseRequest() refuses it
  const uint32_t now = unixNow();
  durability::WriteRequest write;
  write.op = writeOpFor(loud);
  write.key = request.key;  // views into the request: copied once, into the item
  if (write.op != durability::WriteOp::kDelete) {
    write.value = request.value;
    write.meta.flags = request.flags;
    write.meta.expiry = absoluteExpiry(request.expiry, now);
    write.meta.datatype = isJson(request.value) ? protocol::kDatatypeJson : protocol::kDatatypeRaw;
  }
  write.cas = Dispatcher::nextCas();
  write.expected_cas = request.cas;
  write.unix_now = now;
  write.durability = request.durability;

  std::optional<LateReply> late;
  if (bucket->durability().mayPend(write)) late = context.defer();
  Disposition disposition = Disposition::kAnswered;
  send(context, *bucket, write, shapeFor(context, *bucket), late, false, disposition);
  return disposition;
}

// What a read-modify-write makes of the current item (null: none): the new
// value, or a status to answer (with no body: each is item-level).
struct Modified {
  Status status = Status::kSuccess;
  std::string value;
  vbucket::ItemMeta meta;
  std::optional<uint64_t> counter;  // INCREMENT/DECREMENT: the answer's value
};

constexpr int kReadModifyWriteAttempts = 8;

// Reads the key's item, computes the new one and writes it on the condition
// that the item has not changed (its CAS), retrying a few times when another
// write won; Etmpfail (0x86, which clients retry) after that. Goes through
// the durability layer like any mutation, so a durability frame makes it a
// SyncWrite.
template <typename Compute>
Disposition readModifyWrite(CommandContext& context, Compute compute) {
  const protocol::Request& request = context.request;
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return Disposition::kAnswered;
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr) return Disposition::kAnswered;
  std::optional<LateReply> late;
  for (int attempt = 0; attempt < kReadModifyWriteAttempts; ++attempt) {
    const uint32_t now = unixNow();
    vbucket::QueuedItem item = vb->hashTable().find(request.key);
    if (item != nullptr && item->expiredAt(now)) item = nullptr;
    // A CAS on an absent key goes to compute(): APPEND/PREPEND answer
    // NotStored, as kv_engine's AppendPrependCommandContext remaps a missing
    // key. (INCREMENT/DECREMENT carry no CAS: parseRequest() refuses one.)
    if (request.cas != 0 && item != nullptr && item->cas != request.cas) {
      answerError(context, Status::kKeyExists, {});
      return Disposition::kAnswered;
    }
    Modified modified = compute(item.get(), now);
    if (modified.status != Status::kSuccess) {
      answerError(context, modified.status, {});
      return Disposition::kAnswered;
    }
    durability::WriteRequest write;
    write.op = item == nullptr ? durability::WriteOp::kAdd : durability::WriteOp::kSet;
    write.key = request.key;
    write.value = modified.value;  // `modified` outlives send()
    write.meta = modified.meta;
    write.cas = Dispatcher::nextCas();
    write.expected_cas = item == nullptr ? 0 : item->cas;
    write.unix_now = now;
    write.durability = request.durability;
    if (!late && bucket->durability().mayPend(write)) late = context.defer();
    LateAnswerShape shape = shapeFor(context, *bucket);
    shape.has_counter = modified.counter.has_value();
    shape.counter = modified.counter.value_or(0);
    Disposition disposition = Disposition::kAnswered;
    if (send(context, *bucket, write, shape, late, true, disposition) == Sent::kDone) {
      return disposition;
    }
  }
  answerError(context, Status::kEtmpfail, "the item kept changing under the update; retry");
  return Disposition::kAnswered;
}

// The stored value split into its xattr section (kept as it is) and the body
// the binary commands work on (subdoc/xattr_blob.h). False: a malformed section.
bool splitStored(const vbucket::Item& item, subdoc::SplitValue& split) {
  return subdoc::splitValue(item.value(), item.meta.datatype, split);
}

// `body` behind the xattr section `xattrs`, with the datatype that says so.
void joinStored(Modified& m, std::string_view xattrs, std::string_view body, bool json) {
  m.value.reserve(xattrs.size() + body.size());
  m.value.append(xattrs).append(body);
  m.meta.datatype = static_cast<uint8_t>((json ? protocol::kDatatypeJson : protocol::kDatatypeRaw) |
                                         (xattrs.empty() ? 0 : subdoc::datatype::kXattr));
}

// INCREMENT/DECREMENT (kv_engine docs/BinaryProtocol.md): the counter is the
// value as decimal text, read as kv_engine's safe_strtoull reads it
// (parseCounter, parse_number.h); an absent key is created with `initial`
// unless the expiry is 0xffffffff (then KeyNotFound); an increment wraps at
// 2^64, a decrement stops at 0; a value that is no such number is
// DeltaBadval. The new value is stored as datatype JSON, flags, expiry and
// xattrs kept (the counter is the body behind them).
Disposition counter(CommandContext& context) {
  const protocol::Request& request = context.request;
  const bool increment = protocol::unquiet(request.opcode) == Opcode::kIncrement;
  return readModifyWrite(context, [&](const vbucket::Item* item, uint32_t now) {
    Modified m;
    std::string_view xattrs;  // a counter keeps the item's xattrs
    uint64_t value = request.initial;
    if (item == nullptr) {
      if (request.expiry == 0xffffffff) {
        m.status = Status::kKeyNotFound;
        return m;
      }
      m.meta.expiry = absoluteExpiry(request.expiry, now);
    } else {
      subdoc::SplitValue split;
      if (!splitStored(*item, split)) {
        m.status = Status::kInternalError;
        return m;
      }
      xattrs = split.xattrs;
      const std::optional<uint64_t> current = parseCounter(split.body);
      if (!current) {
        m.status = Status::kDeltaBadval;
        return m;
      }
      value = increment ? *current + request.delta  // wraps at 2^64
                        : (*current < request.delta ? 0 : *current - request.delta);
      m.meta = item->meta;
    }
    joinStored(m, xattrs, std::to_string(value), true);
    m.counter = value;
    return m;
  });
}

// APPEND/PREPEND: the item must exist (NotStored otherwise); flags and
// expiry stay, the datatype is the joined value's. Xattrs stay in front of
// the body, which alone is appended to (as kv_engine's append keeps them).
Disposition concat(CommandContext& context) {
  const protocol::Request& request = context.request;
  const bool append = protocol::unquiet(request.opcode) == Opcode::kAppend;
  return readModifyWrite(context, [&](const vbucket::Item* item, uint32_t) {
    Modified m;
    if (item == nullptr) {
      m.status = Status::kNotStored;
      return m;
    }
    subdoc::SplitValue split;
    if (!splitStored(*item, split)) {
      m.status = Status::kInternalError;
      return m;
    }
    std::string body = append ? std::string(split.body).append(request.value)
                              : std::string(request.value).append(split.body);
    m.meta = item->meta;
    const bool json = isJson(body);
    joinStored(m, split.xattrs, body, json);
    return m;
  });
}

}  // namespace

void addMutationCommands(CommandTable& table) {
  for (Opcode opcode : {Opcode::kSet, Opcode::kAdd, Opcode::kReplace, Opcode::kDelete,
                        Opcode::kSetQ, Opcode::kAddQ, Opcode::kReplaceQ, Opcode::kDeleteQ}) {
    table[static_cast<uint8_t>(opcode)] = {&mutate};
  }
  for (Opcode opcode :
       {Opcode::kIncrement, Opcode::kDecrement, Opcode::kIncrementQ, Opcode::kDecrementQ}) {
    table[static_cast<uint8_t>(opcode)] = {&counter};
  }
  for (Opcode opcode : {Opcode::kAppend, Opcode::kPrepend, Opcode::kAppendQ, Opcode::kPrependQ}) {
    table[static_cast<uint8_t>(opcode)] = {&concat};
  }
}

}  // namespace syncwrite::server::commands

namespace syncwrite::server {

bool lateAnswerMayBeSent(const LateAnswerShape& shape,
                         const durability::Resolution& resolution) noexcept {
  return shape.xerror || resolution.committed ||
         protocol::statusWithoutXerror(protocol::Status::kSyncWriteAmbiguous).has_value();
}

void appendLateAnswer(std::string& out, const LateAnswerShape& shape,
                      const durability::Resolution& resolution) {
  if (resolution.committed) {
    commands::appendSuccess(out, shape, resolution.cas, resolution.resolution_seqno);
    return;
  }
  protocol::appendErrorContextResponse(out, shape.opcode, protocol::Status::kSyncWriteAmbiguous,
                                       shape.opaque, commands::ambiguousContext(resolution.reason),
                                       shape.json);
}

size_t lateAnswerSize(const LateAnswerShape& shape,
                      const durability::Resolution& resolution) noexcept {
  if (!resolution.committed) {
    return protocol::kHeaderSize + commands::ambiguousContext(resolution.reason).size();
  }
  if (shape.quiet) return 0;
  return protocol::kHeaderSize + (shape.has_uuid ? 16 : 0) +
         commands::counterAnswerValue(shape).size();
}

}  // namespace syncwrite::server
