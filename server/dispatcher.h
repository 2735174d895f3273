// Dispatcher: executes one validated request (protocol/request.h) for a
// connection and says how it was answered.
//
// It looks the opcode up in a table each command family fills
// (commands/families.h) and runs the handler with a CommandContext
// (command.h). Most commands answer at once: their response bytes are
// appended to `out`. A SyncWrite the durability layer accepted answers later,
// when it resolves, through a LateReply taken from `defer` and the answer's
// shape left in `late_shape`.
//
// Statuses (docs/protocol.md lists them all): data commands before
// SELECT_BUCKET 0x08; a vbucket that does not exist or is not active 0x07;
// durability: kInvalidLevel 0xa0, kDurabilityImpossible 0xa1,
// kSyncWriteInProgress 0xa2; ADD of a present key 0x02; REPLACE/DELETE/GET
// of an absent key 0x01; APPEND/PREPEND of one 0x05; a refused SET_PARAM
// 0x04 with the config layer's message; a request CAS (compare-and-swap)
// makes SET/REPLACE/DELETE/APPEND/PREPEND conditional (0x02 when it moved).
// Before any handler: a request marked JSON on a connection that did not
// negotiate JSON is 0x04. After it, for a connection without XERROR, the
// answer is remapped or the connection closed (xerror_remap.h, kDisconnect).
//
// CAS: the server chooses each write's CAS: nanoseconds of the real-time
// clock, or the previous CAS + 1 when the clock has not moved past it, so
// CAS values are unique and increasing within the process (a hybrid clock
// like kv_engine's, without the vbucket part).
//
// Thread-safety: execute() is called on a connection's I/O thread; the
// dispatcher itself holds no per-connection state (that is the Session) and
// may serve every connection at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "server/command.h"
#include "server/protocol/request.h"
#include "server/server_context.h"

namespace syncwrite::server {

class Dispatcher {
 public:
  explicit Dispatcher(ServerContext& context);

  // Executes `request`. `defer` gives a LateReply bound to this request's
  // response slot; it is called at most once, and only for a mutation that
  // may become a SyncWrite (one with a durability frame, or any mutation
  // while the bucket's durability_min_level is above none). Its LateReply is
  // called exactly once if the answer is kDeferred — possibly on another
  // thread before execute() returns — and never otherwise. When kDeferred,
  // `late_shape` says how to build the answer (appendLateAnswer, command.h).
  Disposition execute(const protocol::Request& request, Session& session, std::string& out,
                      const std::function<LateReply()>& defer, LateAnswerShape& late_shape);

  // The next CAS (see the file comment). Thread-safe.
  static uint64_t nextCas() noexcept;
  // The last CAS nextCas() returned (0 before the first): every CAS handed
  // out so far is at or below it.
  static uint64_t lastCas() noexcept;
  // Later CAS values are above `cas` (a warmed-up bucket's highest stored
  // one: CAS stays unique across a restart even if the clock went back).
  static void casAtLeast(uint64_t cas) noexcept;

 private:
  ServerContext& context_;
  CommandTable table_{};
};

}  // namespace syncwrite::server
