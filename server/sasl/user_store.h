// UserStore: the users syncwrite-server authenticates, with what SASL needs
// to check each mechanism and never the password itself.
//
// For every user and SCRAM hash (RFC 5802 §3, RFC 7677): a random 16-byte
// salt, the iteration count, StoredKey = H(HMAC(SaltedPassword, "Client
// Key")) and ServerKey = HMAC(SaltedPassword, "Server Key"), computed once
// when the store is built. For PLAIN: SHA-512(salt || password).
//
// A user that does not exist gets, on request, credentials derived from a
// per-store secret and the name (a stable salt, keys nobody can match), so a
// SCRAM exchange for an unknown name looks like one for a known name until
// its proof fails.
//
// Thread-safety: immutable after construction; every member is const.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "server/sasl/crypto.h"

namespace syncwrite::server::sasl {

struct ScramCredentials {
  std::string salt;
  int iterations = 0;
  std::string stored_key;
  std::string server_key;
};

class UserStore {
 public:
  // RFC 7677 asks for at least 4096 iterations.
  static constexpr int kIterations = 4096;

  // `passwords`: user name → password. Cost: 3 PBKDF2 runs per user.
  explicit UserStore(const std::map<std::string, std::string, std::less<>>& passwords);

  bool empty() const noexcept { return users_.empty(); }
  size_t size() const noexcept { return users_.size(); }

  // The user's SCRAM credentials for `hash`, or null when there is no such user.
  const ScramCredentials* scram(std::string_view user, Hash hash) const;

  // Credentials for a user that does not exist: same shape, stable per name,
  // matching no password.
  ScramCredentials decoy(std::string_view user, Hash hash) const;

  // True when `user` exists and `password` is its password (PLAIN).
  bool checkPlain(std::string_view user, std::string_view password) const;

 private:
  struct User {
    ScramCredentials sha1, sha256, sha512;
    std::string plain_salt;
    std::string plain_digest;
  };
  std::map<std::string, User, std::less<>> users_;
  std::string secret_;  // for decoys
};

// The SCRAM credentials of `password` with `salt` and `iterations`.
ScramCredentials scramCredentials(Hash hash, std::string_view password, std::string salt,
                                  int iterations);

}  // namespace syncwrite::server::sasl
