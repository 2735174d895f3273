// Command: what one command handler is given, and what it says back.
//
// The dispatcher (dispatcher.h) looks a request's opcode up in a table of
// handlers; each command family (server/commands/) fills its own entries.
// A handler appends its whole answer to `out` and returns kAnswered, or, for
// an answer decided later (a SyncWrite), takes a LateReply from `defer` and
// returns kDeferred.
//
// Thread-safety: a handler runs on its connection's strand; it may touch the
// Session freely and everything else only through thread-safe members.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "server/protocol/request.h"
#include "server/server_context.h"
#include "vbucket/vbucket.h"

namespace syncwrite::server {

// Per-connection state the commands change.
struct Session {
  Bucket* bucket = nullptr;  // after SELECT_BUCKET
  // After DCP_OPEN: the replica node this connection acknowledges for, and
  // the bucket it opened in (acks go there even if another is selected later).
  std::string dcp_replica;
  Bucket* dcp_bucket = nullptr;
};

// Fills the request's response slot later, from any thread, exactly once.
using LateReply = std::function<void(std::string response)>;

enum class Disposition {
  kAnswered,  // `out` holds the whole answer (possibly nothing)
  kDeferred,  // a LateReply will deliver it
  kClose,     // `out` holds the answer; close the connection after sending it
};

struct CommandContext {
  ServerContext& server;
  const protocol::Request& request;
  Session& session;
  std::string& out;
  // Binds a LateReply to this request's response slot. A handler calls it
  // only when its answer may come later, at most once.
  const std::function<LateReply()>& defer;
};

using CommandHandler = Disposition (*)(CommandContext& context);

// Handlers by opcode byte; null for an opcode no family implements.
using CommandTable = std::array<CommandHandler, 256>;

// Helpers the families share. Each appends one error answer to `out`.

// 0x08: a data command before SELECT_BUCKET.
void answerNoBucket(CommandContext& context);
// 0x07: the request's vbucket is not active here (or does not exist).
void answerNotMyVbucket(CommandContext& context);

// The session's bucket, or null after answering NoBucket.
Bucket* selectedBucket(CommandContext& context);
// The request's vbucket in the selected bucket if it is active, or null after
// answering NoBucket or NotMyVbucket.
vbucket::VBucket* activeVbucket(CommandContext& context);

}  // namespace syncwrite::server
