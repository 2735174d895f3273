#include "server/dispatcher.h"

#include <atomic>
#include <chrono>
#include <string_view>

#include "server/commands/families.h"
#include "server/metrics/op_counters.h"
#include "server/protocol/packet.h"
#include "server/protocol/response_encoder.h"
#include "server/xerror_remap.h"

namespace syncwrite::server {

Dispatcher::Dispatcher(ServerContext& context) : context_(context) {
  commands::addMutationCommands(table_);
  commands::addRetrievalCommands(table_);
  commands::addSessionCommands(table_);
  commands::addAdminCommands(table_);
  commands::addDcpCommands(table_);
  commands::addAuthCommands(table_);
  commands::addClusterCommands(table_);
  commands::addSubdocCommands(table_);
}

namespace {
// The last CAS handed out (nextCas).
std::atomic<uint64_t> last_cas{0};
}  // namespace

uint64_t Dispatcher::nextCas() noexcept {
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  uint64_t prev = last_cas.load(std::memory_order_relaxed);
  uint64_t next;
  do {
    next = now > prev ? now : prev + 1;
  } while (!last_cas.compare_exchange_weak(prev, next, std::memory_order_relaxed));
  return next;
}

uint64_t Dispatcher::lastCas() noexcept { return last_cas.load(std::memory_order_relaxed); }

void Dispatcher::casAtLeast(uint64_t cas) noexcept {
  uint64_t prev = last_cas.load(std::memory_order_relaxed);
  while (prev < cas && !last_cas.compare_exchange_weak(prev, cas, std::memory_order_relaxed)) {
  }
}

Disposition Dispatcher::execute(const protocol::Request& request, Session& session,
                                std::string& out, const std::function<LateReply()>& defer,
                                LateAnswerShape& late_shape) {
  const CommandEntry& entry = table_[static_cast<uint8_t>(request.opcode)];
  if (entry.handler == nullptr) {
    // parseRequest refuses opcodes it does not know; this is a guard. An
    // unknown command is answered with no body, as kv_engine does.
    protocol::appendStatusResponse(out, request.opcode, protocol::Status::kUnknownCommand,
                                   request.opaque);
    return Disposition::kAnswered;
  }
  CommandContext context{context_, request, session, out, defer, late_shape};
  const size_t before = out.size();
  Disposition disposition = Disposition::kAnswered;
  if ((request.datatype & protocol::kDatatypeJson) != 0 && !session.json) {
    // kv_engine's McbpValidator::verify_header, before any command runs.
    answerError(context, protocol::Status::kEinval,
                "Datatype (JSON) not enabled for the connection");
  } else if (entry.needs_auth && mustAuthenticateFirst(session, context_)) {
    answerError(context, protocol::Status::kNoAccess,
                "authenticate first (SASL_AUTH): this server has users");
  } else {
    disposition = entry.handler(context);
  }
  // After the handler: a HELLO that turned XERROR on answers as one.
  if (!session.xerror && !remapForClientWithoutXerror(out, before)) {
    return Disposition::kDisconnect;
  }
  // The status of its first answer (a quiet command that answered nothing
  // succeeded); a deferred one is counted when its answer is built.
  if (disposition == Disposition::kAnswered || disposition == Disposition::kClose) {
    metrics::OpCounters::count(
        static_cast<uint8_t>(request.opcode),
        out.size() >= before + protocol::kHeaderSize
            ? protocol::decodeHeader(std::string_view(out).substr(before)).vbucket_or_status
            : static_cast<uint16_t>(protocol::Status::kSuccess));
  }
  return disposition;
}

}  // namespace syncwrite::server
