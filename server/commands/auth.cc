// SASL_LIST_MECHS, SASL_AUTH, SASL_STEP (kv_engine docs/sasl.md).
//
// SASL_AUTH starts an exchange (key: the mechanism, value: the client's first
// message); the answer is AuthContinue 0x21 with the server's challenge, or
// Success, or AuthError 0x20. SASL_STEP carries the next message. A failure
// is logged with the user and the peer's address and leaves the connection
// open and unauthenticated.
//
// A server with no users is open: nothing needs authentication, and PLAIN is
// accepted as given so that a client configured with credentials still
// connects; SCRAM cannot be (it needs the password to prove itself).
#include <string>

#include <absl/strings/str_cat.h>

#include "server/commands/families.h"
#include "server/log.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::commands {
namespace {

using protocol::Opcode;
using protocol::Status;

bool open(const CommandContext& context) {
  return context.server.users == nullptr || context.server.users->empty();
}

Disposition listMechs(CommandContext& context) {
  protocol::appendResponse(context.out, {.opcode = context.request.opcode,
                                         .status = Status::kSuccess,
                                         .opaque = context.request.opaque,
                                         .value = sasl::kMechanisms});
  return Disposition::kAnswered;
}

// Answers what the exchange said, and forgets the exchange when it is over.
Disposition answerStep(CommandContext& context, const sasl::StepResult& step) {
  Session& session = context.session;
  switch (step.outcome) {
    case sasl::StepResult::Outcome::kContinue:
      protocol::appendResponse(context.out, {.opcode = context.request.opcode,
                                             .status = Status::kAuthContinue,
                                             .opaque = context.request.opaque,
                                             .value = step.payload});
      return Disposition::kAnswered;
    case sasl::StepResult::Outcome::kSuccess:
      session.user = step.user;
      session.sasl.reset();
      protocol::appendResponse(context.out, {.opcode = context.request.opcode,
                                             .status = Status::kSuccess,
                                             .opaque = context.request.opaque,
                                             .value = step.payload});
      return Disposition::kAnswered;
    case sasl::StepResult::Outcome::kFailure:
      break;
  }
  session.sasl.reset();
  logLine(absl::StrCat("authentication failed for user '", step.user, "' from ",
                       context.session.peer, ": ", step.error));
  // kv_engine gives no reason on the wire: a client learns only that it failed.
  answerError(context, Status::kAuthError, "authentication failed");
  return Disposition::kAnswered;
}

Disposition auth(CommandContext& context) {
  Session& session = context.session;
  const std::string mechanism(context.request.key);
  if (open(context)) {
    if (mechanism != "PLAIN") {
      answerError(context, Status::kAuthError,
                  "this server has no users (the config has no \"users\"): only PLAIN is "
                  "accepted, and without checking");
      return Disposition::kAnswered;
    }
    session.user = "<open>";
    protocol::appendStatusResponse(context.out, context.request.opcode, Status::kSuccess,
                                   context.request.opaque);
    return Disposition::kAnswered;
  }
  session.user.clear();  // a new SASL_AUTH starts over, as in kv_engine
  session.sasl = sasl::SaslExchange::start(mechanism, *context.server.users);
  if (session.sasl == nullptr) {
    answerError(context, Status::kAuthError,
                absl::StrCat("unknown mechanism '", mechanism, "' (this server offers ",
                             std::string(sasl::kMechanisms), ")"));
    return Disposition::kAnswered;
  }
  return answerStep(context, session.sasl->step(context.request.value));
}

Disposition step(CommandContext& context) {
  Session& session = context.session;
  if (session.sasl == nullptr) {
    answerError(context, Status::kAuthError, "SASL_STEP without an exchange under way (SASL_AUTH)");
    return Disposition::kAnswered;
  }
  return answerStep(context, session.sasl->step(context.request.value));
}

}  // namespace

void addAuthCommands(CommandTable& table) {
  table[static_cast<uint8_t>(Opcode::kSaslListMechs)] = {&listMechs, false};
  table[static_cast<uint8_t>(Opcode::kSaslAuth)] = {&auth, false};
  table[static_cast<uint8_t>(Opcode::kSaslStep)] = {&step, false};
}

}  // namespace syncwrite::server::commands
