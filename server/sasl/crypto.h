// The few cryptographic primitives SASL needs, each a thin call into
// OpenSSL's libcrypto (never hand-written): digests, HMAC, PBKDF2, random
// bytes and a constant-time compare.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace syncwrite::server::sasl {

// The hash a SCRAM mechanism is built on.
enum class Hash { kSha1, kSha256, kSha512 };

// Digest size in bytes: 20, 32 or 64.
size_t digestSize(Hash hash) noexcept;

// H(data).
std::string digest(Hash hash, std::string_view data);

// HMAC-H(key, data).
std::string hmac(Hash hash, std::string_view key, std::string_view data);

// PBKDF2 with HMAC-H, output of digestSize(hash) bytes (RFC 5802's Hi()).
// Cost: `iterations` HMACs.
std::string pbkdf2(Hash hash, std::string_view password, std::string_view salt, int iterations);

// `n` bytes from OpenSSL's CSPRNG. Aborts the process if the generator fails
// (it cannot, once seeded, on Linux).
std::string randomBytes(size_t n);

// True when a and b are equal, in time that depends only on their lengths.
bool constantTimeEqual(std::string_view a, std::string_view b) noexcept;

}  // namespace syncwrite::server::sasl
