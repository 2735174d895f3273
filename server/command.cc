#include "server/command.h"

#include <absl/strings/str_cat.h>

#include "server/bucket.h"
#include "server/protocol/response_encoder.h"
#include "vbucket/vbucket_state.h"

namespace syncwrite::server {

void answerNoBucket(CommandContext& context) {
  protocol::appendErrorResponse(context.out, context.request.opcode, protocol::Status::kNoBucket,
                                context.request.opaque,
                                "no bucket selected: send SELECT_BUCKET first");
}

void answerNotMyVbucket(CommandContext& context) {
  protocol::appendErrorResponse(
      context.out, context.request.opcode, protocol::Status::kNotMyVbucket, context.request.opaque,
      absl::StrCat("vbucket ", context.request.vbucket, " is not active here"));
}

Bucket* selectedBucket(CommandContext& context) {
  if (context.session.bucket == nullptr) answerNoBucket(context);
  return context.session.bucket;
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
