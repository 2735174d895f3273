#include "server/sasl/exchange.h"

#include <utility>
#include <vector>

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::server::sasl {
namespace {

// Debian's Abseil has its own string_view type; these bridge std's to it.
absl::string_view av(std::string_view s) { return {s.data(), s.size()}; }

bool base64Decode(std::string_view in, std::string& out) {
  return absl::Base64Unescape(av(in), &out);
}

// `in` split at every `separator`, empty pieces kept.
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

StepResult failure(std::string error, std::string user = {}) {
  StepResult r;
  r.outcome = StepResult::Outcome::kFailure;
  r.error = std::move(error);
  r.user = std::move(user);
  return r;
}

// PLAIN: "[authzid] NUL authcid NUL passwd" in one message.
class PlainExchange final : public SaslExchange {
 public:
  explicit PlainExchange(const UserStore& users) : users_(users) {}

  StepResult step(std::string_view message) override {
    if (done_) return failure("PLAIN takes one message");
    done_ = true;
    std::vector<std::string_view> parts = split(message, '\0');
    if (parts.size() != 3) return failure("PLAIN: expected authzid NUL user NUL password");
    const std::string user(parts[1]);
    if (!users_.checkPlain(user, parts[2])) return failure("unknown user or wrong password", user);
    StepResult r;
    r.outcome = StepResult::Outcome::kSuccess;
    r.user = user;
    return r;
  }

 private:
  const UserStore& users_;
  bool done_ = false;
};

// "=2C" -> ",", "=3D" -> "=" (RFC 5802 saslname); false on any other '='.
bool decodeSaslName(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '=') {
      out.push_back(in[i]);
      continue;
    }
    const std::string_view code = in.substr(i + 1, 2);
    if (code == "2C") {
      out.push_back(',');
    } else if (code == "3D") {
      out.push_back('=');
    } else {
      return false;
    }
    i += 2;
  }
  return true;
}

class ScramExchange final : public SaslExchange {
 public:
  ScramExchange(Hash hash, const UserStore& users) : hash_(hash), users_(users) {}

  StepResult step(std::string_view message) override {
    switch (state_) {
      case State::kClientFirst:
        return clientFirst(message);
      case State::kClientFinal:
        state_ = State::kDone;
        return clientFinal(message);
      case State::kDone:
        break;
    }
    return failure("the SCRAM exchange is already over", user_);
  }

 private:
  enum class State { kClientFirst, kClientFinal, kDone };

  StepResult clientFirst(std::string_view message) {
    state_ = State::kDone;  // until this message proves well formed
    // gs2-header: cbind-flag "," [authzid] ","
    const size_t first_comma = message.find(',');
    if (first_comma == std::string_view::npos) return failure("SCRAM: no gs2 header");
    const std::string_view flag = message.substr(0, first_comma);
    if (flag != "n" && flag != "y") {
      return failure("SCRAM: channel binding is not supported (gs2 flag must be n or y)");
    }
    const size_t second_comma = message.find(',', first_comma + 1);
    if (second_comma == std::string_view::npos) return failure("SCRAM: no gs2 header");
    gs2_header_ = std::string(message.substr(0, second_comma + 1));
    client_first_bare_ = std::string(message.substr(second_comma + 1));

    std::vector<std::string_view> attrs = split(client_first_bare_, ',');
    if (attrs.size() < 2 || !attrs[0].starts_with("n=") || !attrs[1].starts_with("r=")) {
      return failure("SCRAM: client-first must be n=<user>,r=<nonce>");
    }
    for (size_t i = 2; i < attrs.size(); ++i) {
      if (attrs[i].starts_with("m=")) return failure("SCRAM: mandatory extension refused");
    }
    if (!decodeSaslName(attrs[0].substr(2), user_) || user_.empty()) {
      return failure("SCRAM: malformed user name");
    }
    const std::string_view client_nonce = attrs[1].substr(2);
    if (client_nonce.empty()) return failure("SCRAM: empty client nonce", user_);

    if (const ScramCredentials* c = users_.scram(user_, hash_); c != nullptr) {
      credentials_ = *c;
    } else {
      credentials_ = users_.decoy(user_, hash_);
      unknown_user_ = true;
    }
    nonce_ = absl::StrCat(std::string(client_nonce), absl::Base64Escape(randomBytes(24)));
    server_first_ = absl::StrCat("r=", nonce_, ",s=", absl::Base64Escape(credentials_.salt),
                                 ",i=", credentials_.iterations);
    state_ = State::kClientFinal;
    StepResult r;
    r.outcome = StepResult::Outcome::kContinue;
    r.payload = server_first_;
    return r;
  }

  StepResult clientFinal(std::string_view message) {
    const size_t proof_at = message.rfind(",p=");
    if (proof_at == std::string_view::npos)
      return failure("SCRAM: client-final has no proof", user_);
    const std::string_view without_proof = message.substr(0, proof_at);
    std::string proof;
    if (!base64Decode(message.substr(proof_at + 3), proof) || proof.size() != digestSize(hash_)) {
      return failure("SCRAM: malformed proof", user_);
    }
    std::vector<std::string_view> attrs = split(without_proof, ',');
    if (attrs.size() < 2 || !attrs[0].starts_with("c=") || !attrs[1].starts_with("r=")) {
      return failure("SCRAM: client-final must start c=...,r=...", user_);
    }
    std::string binding;
    if (!base64Decode(attrs[0].substr(2), binding) || binding != gs2_header_) {
      return failure("SCRAM: channel binding data does not match the gs2 header", user_);
    }
    if (attrs[1].substr(2) != nonce_) return failure("SCRAM: nonce mismatch", user_);

    const std::string auth_message =
        absl::StrCat(client_first_bare_, ",", server_first_, ",", std::string(without_proof));
    const std::string client_signature = hmac(hash_, credentials_.stored_key, auth_message);
    std::string client_key = proof;
    for (size_t i = 0; i < client_key.size(); ++i) {
      client_key[i] = static_cast<char>(client_key[i] ^ client_signature[i]);
    }
    if (unknown_user_ || !constantTimeEqual(digest(hash_, client_key), credentials_.stored_key)) {
      return failure("unknown user or wrong password", user_);
    }
    StepResult r;
    r.outcome = StepResult::Outcome::kSuccess;
    r.user = user_;
    r.payload =
        absl::StrCat("v=", absl::Base64Escape(hmac(hash_, credentials_.server_key, auth_message)));
    return r;
  }

  const Hash hash_;
  const UserStore& users_;
  State state_ = State::kClientFirst;
  std::string user_;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;
  ScramCredentials credentials_;
  bool unknown_user_ = false;
};

}  // namespace

std::unique_ptr<SaslExchange> SaslExchange::start(std::string_view mechanism,
                                                  const UserStore& users) {
  if (mechanism == "SCRAM-SHA512") return std::make_unique<ScramExchange>(Hash::kSha512, users);
  if (mechanism == "SCRAM-SHA256") return std::make_unique<ScramExchange>(Hash::kSha256, users);
  if (mechanism == "SCRAM-SHA1") return std::make_unique<ScramExchange>(Hash::kSha1, users);
  if (mechanism == "PLAIN") return std::make_unique<PlainExchange>(users);
  return nullptr;
}

}  // namespace syncwrite::server::sasl
