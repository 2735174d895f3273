// GET.
#include "server/commands/families.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

Disposition get(CommandContext& context) {
  const protocol::Request& request = context.request;
  vbucket::VBucket* vb = activeVbucket(context);
  if (vb == nullptr) return Disposition::kAnswered;
  vbucket::QueuedItem item = vb->hashTable().find(request.key);
  if (item == nullptr) {
    protocol::appendErrorResponse(context.out, request.opcode, Status::kKeyNotFound,
                                  request.opaque, "no such key");
    return Disposition::kAnswered;
  }
  // Flags are not stored (the vbucket layer's items carry none): always 0.
  protocol::appendGetResponse(context.out, request.opaque, item->cas, 0, item->value);
  return Disposition::kAnswered;
}

}  // namespace

void addRetrievalCommands(CommandTable& table) { table[static_cast<uint8_t>(Opcode::kGet)] = &get; }

}  // namespace syncwrite::server::commands
