#include "server/sasl/crypto.h"

#include <cstdlib>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace syncwrite::server::sasl {
namespace {

const EVP_MD* md(Hash hash) noexcept {
  switch (hash) {
    case Hash::kSha1:
      return EVP_sha1();
    case Hash::kSha256:
      return EVP_sha256();
    case Hash::kSha512:
      break;
  }
  return EVP_sha512();
}

// OpenSSL reports failure only for allocation failure or a broken build;
// neither leaves anything sensible to answer.
void check(int ok) {
  if (ok != 1) std::abort();
}

}  // namespace

size_t digestSize(Hash hash) noexcept { return static_cast<size_t>(EVP_MD_get_size(md(hash))); }

std::string digest(Hash hash, std::string_view data) {
  std::string out(digestSize(hash), '\0');
  unsigned int size = 0;
  check(EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(out.data()), &size,
                   md(hash), nullptr));
  return out;
}

std::string hmac(Hash hash, std::string_view key, std::string_view data) {
  std::string out(digestSize(hash), '\0');
  unsigned int size = 0;
  if (HMAC(md(hash), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &size) == nullptr) {
    std::abort();
  }
  return out;
}

std::string pbkdf2(Hash hash, std::string_view password, std::string_view salt, int iterations) {
  std::string out(digestSize(hash), '\0');
  check(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                          reinterpret_cast<const unsigned char*>(salt.data()),
                          static_cast<int>(salt.size()), iterations, md(hash),
                          static_cast<int>(out.size()),
                          reinterpret_cast<unsigned char*>(out.data())));
  return out;
}

std::string randomBytes(size_t n) {
  std::string out(n, '\0');
  check(RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)));
  return out;
}

bool constantTimeEqual(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace syncwrite::server::sasl
