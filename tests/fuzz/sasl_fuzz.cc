// Fuzz target: the server side of SASL (server/sasl/exchange.h): PLAIN, and
// SCRAM's client-first and client-final, against a store with one user
// ("user", password "pencil").
//
// Input: byte 0 picks the mechanism (SCRAM-SHA512, -SHA256, -SHA1, PLAIN, or
// the first message taken as the mechanism's name); byte 1 bit 0 picks how
// SCRAM's client-final is made: the raw rest of the input, or computed by a
// correct client (RFC 5802 §3) from the server-first, with the rest of the
// input as the password (see saltedPassword()); byte 2 is the length of the
// first message (the bytes after it); the rest is the second message (or the
// password).
//
// Properties:
//  - start() knows exactly the four mechanisms of kMechanisms;
//  - PLAIN succeeds exactly for "authzid NUL user NUL pencil";
//  - SCRAM's client-first continues only for a gs2 header "n," or "y,", and
//    then the server-first is "r=<client nonce><server nonce>,s=<salt>,i=4096"
//    with a 16-byte salt, known user or not, the same salt for the same name
//    each time (an unknown name is not told apart by its salt);
//  - a raw client-final never succeeds; a computed one succeeds exactly when
//    the user is "user" and the password "pencil", and then the server-final
//    carries the ServerSignature the client expects;
//  - after success or failure, every further step fails.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

#include "server/sasl/crypto.h"
#include "server/sasl/exchange.h"
#include "server/sasl/user_store.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace sasl = syncwrite::server::sasl;
using Outcome = sasl::StepResult::Outcome;

constexpr std::string_view kUser = "user";
constexpr std::string_view kPassword = "pencil";
constexpr size_t kSaltBytes = 16;

const sasl::UserStore& users() {
  static const sasl::UserStore store(std::map<std::string, std::string, std::less<>>{
      {std::string(kUser), std::string(kPassword)}});
  return store;
}

std::vector<std::string_view> split(std::string_view in, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t at = in.find(separator); at != std::string_view::npos;
       at = in.find(separator, start)) {
    parts.push_back(in.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(in.substr(start));
  return parts;
}

std::string unescapeName(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in.substr(i, 3) == "=2C") {
      out.push_back(',');
      i += 2;
    } else if (in.substr(i, 3) == "=3D") {
      out.push_back('=');
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

// SaltedPassword (RFC 5802 §3). PBKDF2 costs 4096 HMACs, so it runs only for
// the one password that can succeed (once per salt); for any other password a
// cheap HMAC stands in: a client with a wrong password is one whose key the
// server cannot match, however it was derived.
std::string saltedPassword(sasl::Hash hash, std::string_view password, const std::string& salt) {
  if (password != kPassword) return sasl::hmac(hash, password, salt);
  static std::map<std::pair<sasl::Hash, std::string>, std::string> cache;
  auto key = std::make_pair(hash, salt);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (cache.size() > 64) cache.clear();  // a salt per unknown name: keep it bounded
  std::string salted = sasl::pbkdf2(hash, password, salt, sasl::UserStore::kIterations);
  cache.emplace(std::move(key), salted);
  return salted;
}

void checkOver(sasl::SaslExchange& exchange) {
  FUZZ_CHECK(exchange.step("anything").outcome == Outcome::kFailure, "a step after the end");
}

void fuzzPlain(sasl::SaslExchange& exchange, std::string_view message) {
  const sasl::StepResult r = exchange.step(message);
  const std::vector<std::string_view> parts = split(message, '\0');
  const bool valid = parts.size() == 3 && parts[1] == kUser && parts[2] == kPassword;
  FUZZ_CHECK((r.outcome == Outcome::kSuccess) == valid, "PLAIN decided wrongly");
  FUZZ_CHECK(r.outcome != Outcome::kContinue, "PLAIN asked for more");
  if (valid) FUZZ_CHECK(r.user == kUser, "PLAIN authenticated someone else");
  checkOver(exchange);
}

struct ServerFirst {
  std::string nonce;
  std::string salt;
};

// Checks the server-first's shape; returns its parts.
ServerFirst checkServerFirst(std::string_view payload, std::string_view client_nonce) {
  const std::vector<std::string_view> attrs = split(payload, ',');
  FUZZ_CHECK(attrs.size() == 3 && attrs[0].starts_with("r=") && attrs[1].starts_with("s=") &&
                 attrs[2] == "i=4096",
             "server-first is not r=,s=,i=4096");
  ServerFirst first{std::string(attrs[0].substr(2)), {}};
  FUZZ_CHECK(first.nonce.starts_with(client_nonce) && first.nonce.size() > client_nonce.size(),
             "the server nonce does not extend the client's");
  FUZZ_CHECK(absl::Base64Unescape(std::string(attrs[1].substr(2)), &first.salt) &&
                 first.salt.size() == kSaltBytes,
             "the salt is not 16 bytes of base64");
  return first;
}

void fuzzScram(sasl::Hash hash, std::string_view mechanism, std::string_view first,
               std::string_view second, bool computed_final) {
  auto exchange = sasl::SaslExchange::start(mechanism, users());
  const sasl::StepResult r1 = exchange->step(first);
  FUZZ_CHECK(r1.outcome != Outcome::kSuccess, "SCRAM succeeded on its first message");
  const bool gs2_ok = first.starts_with("n,") || first.starts_with("y,");
  if (r1.outcome == Outcome::kFailure) return checkOver(*exchange);
  FUZZ_CHECK(gs2_ok, "SCRAM went on without a gs2 header n or y");

  const size_t header_end = first.find(',', 2);
  FUZZ_CHECK(header_end != std::string_view::npos, "SCRAM went on without a whole gs2 header");
  const std::string_view gs2_header = first.substr(0, header_end + 1);
  const std::string_view bare = first.substr(header_end + 1);
  const std::vector<std::string_view> attrs = split(bare, ',');
  FUZZ_CHECK(attrs.size() >= 2 && attrs[0].starts_with("n=") && attrs[1].starts_with("r="),
             "SCRAM went on without n= and r=");
  const ServerFirst server_first = checkServerFirst(r1.payload, attrs[1].substr(2));
  {
    auto again = sasl::SaslExchange::start(mechanism, users());
    const sasl::StepResult r = again->step(first);
    FUZZ_CHECK(r.outcome == Outcome::kContinue, "the same client-first decided otherwise");
    FUZZ_CHECK(checkServerFirst(r.payload, attrs[1].substr(2)).salt == server_first.salt,
               "the same name got another salt");
  }
  const std::string user = unescapeName(attrs[0].substr(2));

  if (!computed_final) {
    FUZZ_CHECK(exchange->step(second).outcome == Outcome::kFailure, "a raw client-final succeeded");
    return checkOver(*exchange);
  }
  // RFC 5802 §3, the client's side.
  const std::string without_proof =
      absl::StrCat("c=", absl::Base64Escape(std::string(gs2_header)), ",r=", server_first.nonce);
  const std::string auth_message =
      absl::StrCat(std::string(bare), ",", r1.payload, ",", without_proof);
  const std::string salted = saltedPassword(hash, second, server_first.salt);
  const std::string client_key = sasl::hmac(hash, salted, "Client Key");
  const std::string stored_key = sasl::digest(hash, client_key);
  const std::string signature = sasl::hmac(hash, stored_key, auth_message);
  std::string proof = client_key;
  for (size_t i = 0; i < proof.size(); ++i) proof[i] = static_cast<char>(proof[i] ^ signature[i]);
  const sasl::StepResult r2 =
      exchange->step(absl::StrCat(without_proof, ",p=", absl::Base64Escape(proof)));
  const bool valid = user == kUser && second == kPassword;
  FUZZ_CHECK((r2.outcome == Outcome::kSuccess) == valid, "SCRAM decided a correct client wrongly");
  if (valid) {
    FUZZ_CHECK(r2.user == kUser, "SCRAM authenticated someone else");
    const std::string server_key = sasl::hmac(hash, salted, "Server Key");
    FUZZ_CHECK(r2.payload == absl::StrCat("v=", absl::Base64Escape(
                                                    sasl::hmac(hash, server_key, auth_message))),
               "the server-final carries another ServerSignature");
  }
  checkOver(*exchange);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const size_t first_size = std::min<size_t>(data[2], size - 3);
  const std::string_view first(reinterpret_cast<const char*>(data) + 3, first_size);
  const std::string_view second(reinterpret_cast<const char*>(data) + 3 + first_size,
                                size - 3 - first_size);
  const bool computed_final = (data[1] & 1) != 0;
  switch (data[0] % 5) {
    case 0:
      return fuzzScram(sasl::Hash::kSha512, "SCRAM-SHA512", first, second, computed_final), 0;
    case 1:
      return fuzzScram(sasl::Hash::kSha256, "SCRAM-SHA256", first, second, computed_final), 0;
    case 2:
      return fuzzScram(sasl::Hash::kSha1, "SCRAM-SHA1", first, second, computed_final), 0;
    case 3:
      return fuzzPlain(*sasl::SaslExchange::start("PLAIN", users()), first), 0;
    default:
      break;
  }
  const bool known = first == "SCRAM-SHA512" || first == "SCRAM-SHA256" || first == "SCRAM-SHA1" ||
                     first == "PLAIN";
  FUZZ_CHECK((sasl::SaslExchange::start(first, users()) != nullptr) == known,
             "start() knows another set of mechanisms");
  return 0;
}
