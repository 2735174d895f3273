// HELLO, SELECT_BUCKET, NOOP, VERSION, QUIT.
#include <string>
#include <vector>

#include "server/commands/families.h"
#include "server/protocol/feature.h"
#include "server/protocol/response_encoder.h"
#include "server/version.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

// Each HELLO replaces what the previous one agreed to, as in kv_engine.
Disposition hello(CommandContext& context) {
  const std::vector<protocol::Feature> agreed = protocol::negotiateFeatures(context.request.value);
  Session& session = context.session;
  session.said_hello = true;
  session.json = session.xerror = session.unordered = session.mutation_seqno = false;
  session.xattr = false;
  for (protocol::Feature feature : agreed) {
    switch (feature) {
      case protocol::Feature::kJson:
        session.json = true;
        break;
      case protocol::Feature::kXerror:
        session.xerror = true;
        break;
      case protocol::Feature::kUnorderedExecution:
        session.unordered = true;
        break;
      case protocol::Feature::kMutationSeqno:
        session.mutation_seqno = true;
        break;
      case protocol::Feature::kXattr:
        session.xattr = true;
        break;
      default:
        break;
    }
  }
  protocol::appendHelloResponse(context.out, context.request.opaque, agreed);
  return Disposition::kAnswered;
}

// As kv_engine's select_bucket (daemon/protocol/mcbp/
// select_bucket_executor.cc): NoAccess, no body, to a user who may not
// access that name, whether or not the bucket exists; then KeyNotFound, no
// body, when it does not. (The dispatcher has already refused an
// unauthenticated connection when the server has users.)
Disposition selectBucket(CommandContext& context) {
  const protocol::Request& request = context.request;
  if (!mayAccessBucket(context.session, context.server, request.key)) {
    answerError(context, Status::kNoAccess, {});
  } else if (Bucket* bucket = context.server.findBucket(request.key); bucket != nullptr) {
    context.session.bucket = bucket;
    protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  } else {
    answerError(context, Status::kKeyNotFound, {});
  }
  return Disposition::kAnswered;
}

Disposition noop(CommandContext& context) {
  protocol::appendStatusResponse(context.out, context.request.opcode, Status::kSuccess,
                                 context.request.opaque);
  return Disposition::kAnswered;
}

Disposition version(CommandContext& context) {
  // A bare version, as kv_engine answers (libmemcached parses major.minor.micro).
  protocol::appendVersionResponse(context.out, context.request.opaque, serverVersion());
  return Disposition::kAnswered;
}

Disposition quit(CommandContext& context) {
  protocol::appendStatusResponse(context.out, context.request.opcode, Status::kSuccess,
                                 context.request.opaque);
  return Disposition::kClose;
}

// QUITQ: closes without an answer.
Disposition quitQuietly(CommandContext&) { return Disposition::kClose; }

}  // namespace

void addSessionCommands(CommandTable& table) {
  table[static_cast<uint8_t>(Opcode::kHello)] = {&hello, false};
  table[static_cast<uint8_t>(Opcode::kSelectBucket)] = {&selectBucket};
  table[static_cast<uint8_t>(Opcode::kNoop)] = {&noop, false};
  table[static_cast<uint8_t>(Opcode::kVersion)] = {&version, false};
  // VERBOSITY answers as NOOP does (kv_engine's verbosity_executor: Success,
  // no body); the server has one log level, so the level asked changes nothing.
  table[static_cast<uint8_t>(Opcode::kVerbosity)] = {&noop};
  table[static_cast<uint8_t>(Opcode::kQuit)] = {&quit, false};
  table[static_cast<uint8_t>(Opcode::kQuitQ)] = {&quitQuietly, false};
}

}  // namespace syncwrite::server::commands
