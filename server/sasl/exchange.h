// SaslExchange: the server side of one SASL authentication (SASL_AUTH 0x21,
// then SASL_STEP 0x22 as long as the answer is "continue").
//
// Mechanisms, strongest first as SASL_LIST_MECHS lists them (kv_engine's
// docs/sasl.md): SCRAM-SHA512, SCRAM-SHA256, SCRAM-SHA1 (RFC 5802, RFC 7677)
// and PLAIN (RFC 4616).
//
// SCRAM, as this server reads it:
//  - client-first: a gs2 header "n," or "y," (no channel binding; "p=" is
//    refused), an optional authzid "a=..." (ignored), then "n=<user>,r=<nonce>"
//    with "=2C" and "=3D" decoded in the name. The client nonce may hold any
//    byte but ',' — clients send spaces and other bytes a strict RFC parser
//    would refuse. Extensions after the nonce are ignored, except a mandatory
//    "m=" one, which is refused.
//  - server-first: "r=<client nonce><server nonce>,s=<base64 salt>,i=<n>",
//    the server nonce 24 random bytes, base64.
//  - client-final: "c=<base64 gs2 header>,r=<both nonces>[,...],p=<proof>";
//    the proof is checked against StoredKey (RFC 5802 §3).
//  - server-final: "v=<base64 ServerSignature>".
// An unknown user goes through the same steps with decoy credentials and
// fails at the proof, like a wrong password.
//
// Not thread-safe: one exchange belongs to one connection.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/sasl/crypto.h"
#include "server/sasl/user_store.h"

namespace syncwrite::server::sasl {

// SASL_LIST_MECHS's answer.
inline constexpr std::string_view kMechanisms = "SCRAM-SHA512 SCRAM-SHA256 SCRAM-SHA1 PLAIN";

struct StepResult {
  enum class Outcome {
    kContinue,  // send `payload`; the client answers with SASL_STEP
    kSuccess,   // send `payload` (possibly empty); `user` is authenticated
    kFailure,   // authentication failed; `error` says why, for the log only
  };
  Outcome outcome = Outcome::kFailure;
  std::string payload;
  std::string user;  // on success; on failure, the name the client gave, if any
  std::string error;
};

class SaslExchange {
 public:
  // An exchange for `mechanism` (one of kMechanisms), or null when the
  // mechanism is not one of them. `users` must outlive the exchange.
  static std::unique_ptr<SaslExchange> start(std::string_view mechanism, const UserStore& users);

  virtual ~SaslExchange() = default;

  // The client's next message (SASL_AUTH's value first, then each
  // SASL_STEP's). After kSuccess or kFailure, every further step fails.
  virtual StepResult step(std::string_view message) = 0;
};

}  // namespace syncwrite::server::sasl
