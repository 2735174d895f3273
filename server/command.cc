#include "server/command.h"

#include <chrono>

#include <absl/strings/str_cat.h>

#include "server/bucket.h"
#include "server/cluster_map.h"
#include "server/protocol/response_encoder.h"
#include "server/sasl/user_store.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {

uint32_t unixNow() noexcept {
  return static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

uint32_t absoluteExpiry(uint32_t wire_expiry, uint32_t now) noexcept {
  constexpr uint32_t kRelativeLimit = 30 * 24 * 60 * 60;
  if (wire_expiry == 0) return 0;
  return wire_expiry <= kRelativeLimit ? now + wire_expiry : wire_expiry;
}

void answerError(CommandContext& context, protocol::Status status, std::string_view message) {
  protocol::appendErrorResponse(context.out, context.request.opcode, status, context.request.opaque,
                                message, context.session.json);
}

void answerNoBucket(CommandContext& context) {
  answerError(context, protocol::Status::kNoBucket, "no bucket selected: send SELECT_BUCKET first");
}

std::string memoryFullMessage(const Bucket& bucket) {
  const vbucket::BucketMemory& memory = bucket.memory();
  const vbucket::MemoryLimits limits = memory.limits();
  return absl::StrCat("temporary failure: bucket \"", bucket.name(),
                      "\" is at its memory quota (mem_used ", memory.memUsed(), " of max_size ",
                      limits.quota, " bytes; checkpoint memory ", memory.checkpointBytes(),
                      " of its quota ", limits.checkpoint_quota, "); retry later");
}

void answerNotMyVbucket(CommandContext& context) {
  const Bucket* bucket = currentBucket(context);
  if (bucket == nullptr) {
    answerError(context, protocol::Status::kNotMyVbucket,
                absl::StrCat("vbucket ", context.request.vbucket, " is not active here"));
    return;
  }
  answerJson(context, protocol::Status::kNotMyVbucket, bucketConfigJson(*bucket, context.server));
}

void answerJson(CommandContext& context, protocol::Status status, std::string_view json) {
  protocol::appendResponse(context.out, {.opcode = context.request.opcode,
                                         .status = status,
                                         .opaque = context.request.opaque,
                                         .datatype = context.session.json ? protocol::kDatatypeJson
                                                                          : protocol::kDatatypeRaw,
                                         .value = json});
}

vbucket::VBucketState vbucketStateFor(protocol::VbucketState state) noexcept {
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

bool mustAuthenticateFirst(const Session& session, const ServerContext& server) noexcept {
  return session.user.empty() && server.users != nullptr && !server.users->empty();
}

bool mayAccessBucket(const Session& session, const ServerContext& server,
                     std::string_view bucket) noexcept {
  if (server.user_buckets.empty()) return true;
  const auto limited = server.user_buckets.find(session.user);
  return limited == server.user_buckets.end() || limited->second.contains(bucket);
}

Bucket* sessionBucket(const Session& session, const ServerContext& server) noexcept {
  if (session.bucket != nullptr) return session.bucket;
  if (server.default_bucket == nullptr ||
      !mayAccessBucket(session, server, server.default_bucket->name())) {
    return nullptr;
  }
  return server.default_bucket;
}

Bucket* currentBucket(const CommandContext& context) {
  // The dispatcher has already refused a command that needs authentication
  // on a connection that has none (when the server has users), so the
  // default bucket is only reached by those allowed to use it.
  return sessionBucket(context.session, context.server);
}

Bucket* selectedBucket(CommandContext& context) {
  Bucket* bucket = currentBucket(context);
  if (bucket == nullptr) answerNoBucket(context);
  return bucket;
}

vbucket::VBucket* activeVbucket(CommandContext& context) {
  Bucket* bucket = selectedBucket(context);
  if (bucket == nullptr) return nullptr;
  vbucket::VBucket* vb = bucket->vbuckets().get(context.request.vbucket);
  if (vb == nullptr || vb->state() != vbucket::VBucketState::kActive) {
    answerNotMyVbucket(context);
    return nullptr;
  }
  return vb;
}

}  // namespace syncwrite::server
