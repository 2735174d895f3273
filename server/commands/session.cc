// HELLO, SELECT_BUCKET, NOOP, VERSION, QUIT.
#include <string>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/protocol/feature.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

Disposition hello(CommandContext& context) {
  protocol::appendHelloResponse(context.out, context.request.opaque,
                                protocol::negotiateFeatures(context.request.value));
  return Disposition::kAnswered;
}

Disposition selectBucket(CommandContext& context) {
  const protocol::Request& request = context.request;
  if (Bucket* bucket = context.server.findBucket(request.key); bucket != nullptr) {
    context.session.bucket = bucket;
    protocol::appendStatusResponse(context.out, request.opcode, Status::kSuccess, request.opaque);
  } else {
    protocol::appendErrorResponse(context.out, request.opcode, Status::kKeyNotFound,
                                  request.opaque,
                                  absl::StrCat("no bucket named '", std::string(request.key), "'"));
  }
  return Disposition::kAnswered;
}

Disposition noop(CommandContext& context) {
  protocol::appendStatusResponse(context.out, context.request.opcode, Status::kSuccess,
                                 context.request.opaque);
  return Disposition::kAnswered;
}

Disposition version(CommandContext& context) {
  protocol::appendVersionResponse(context.out, context.request.opaque, kServerVersion);
  return Disposition::kAnswered;
}

Disposition quit(CommandContext& context) {
  protocol::appendStatusResponse(context.out, context.request.opcode, Status::kSuccess,
                                 context.request.opaque);
  return Disposition::kClose;
}

}  // namespace

void addSessionCommands(CommandTable& table) {
  table[static_cast<uint8_t>(Opcode::kHello)] = &hello;
  table[static_cast<uint8_t>(Opcode::kSelectBucket)] = &selectBucket;
  table[static_cast<uint8_t>(Opcode::kNoop)] = &noop;
  table[static_cast<uint8_t>(Opcode::kVersion)] = &version;
  table[static_cast<uint8_t>(Opcode::kQuit)] = &quit;
}

}  // namespace syncwrite::server::commands
