#include "server/sasl/user_store.h"

#include <utility>

#include <absl/strings/str_cat.h>

namespace syncwrite::server::sasl {
namespace {
constexpr size_t kSaltBytes = 16;
}  // namespace

ScramCredentials scramCredentials(Hash hash, std::string_view password, std::string salt,
                                  int iterations) {
  ScramCredentials c;
  const std::string salted = pbkdf2(hash, password, salt, iterations);
  c.salt = std::move(salt);
  c.iterations = iterations;
  c.stored_key = digest(hash, hmac(hash, salted, "Client Key"));
  c.server_key = hmac(hash, salted, "Server Key");
  return c;
}

UserStore::UserStore(const std::map<std::string, std::string, std::less<>>& passwords)
    : secret_(randomBytes(32)) {
  for (const auto& [name, password] : passwords) {
    User user;
    user.sha1 = scramCredentials(Hash::kSha1, password, randomBytes(kSaltBytes), kIterations);
    user.sha256 = scramCredentials(Hash::kSha256, password, randomBytes(kSaltBytes), kIterations);
    user.sha512 = scramCredentials(Hash::kSha512, password, randomBytes(kSaltBytes), kIterations);
    user.plain_salt = randomBytes(kSaltBytes);
    user.plain_digest = digest(Hash::kSha512, user.plain_salt + password);
    users_.emplace(name, std::move(user));
  }
}

const ScramCredentials* UserStore::scram(std::string_view user, Hash hash) const {
  auto it = users_.find(user);
  if (it == users_.end()) return nullptr;
  switch (hash) {
    case Hash::kSha1:
      return &it->second.sha1;
    case Hash::kSha256:
      return &it->second.sha256;
    case Hash::kSha512:
      break;
  }
  return &it->second.sha512;
}

ScramCredentials UserStore::decoy(std::string_view user, Hash hash) const {
  ScramCredentials c;
  c.salt =
      hmac(Hash::kSha256, secret_, absl::StrCat("salt:", std::string(user))).substr(0, kSaltBytes);
  c.iterations = kIterations;
  // Random keys: no proof can match them.
  c.stored_key = randomBytes(digestSize(hash));
  c.server_key = randomBytes(digestSize(hash));
  return c;
}

bool UserStore::checkPlain(std::string_view user, std::string_view password) const {
  auto it = users_.find(user);
  if (it == users_.end()) return false;
  return constantTimeEqual(
      digest(Hash::kSha512, absl::StrCat(it->second.plain_salt, std::string(password))),
      it->second.plain_digest);
}

}  // namespace syncwrite::server::sasl
