// Requirements: what a SyncWrite asks for — a level and a timeout.
//
// The timeout comes from the request's durability frame as 1–65534 ms; a
// request that names none gets the bucket's durability_default_timeout when
// the write is added. "Infinite" never expires; it exists for internal writes
// only and cannot be asked for over the protocol (0 and 0xffff on the wire are
// refused by the protocol layer, as kv_engine does).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "clock/time.h"
#include "durability/level.h"

namespace syncwrite::durability {

class Timeout {
 public:
  static constexpr uint16_t kMinMillis = 1;
  static constexpr uint16_t kMaxMillis = 65534;

  // The bucket's durability_default_timeout, resolved when the write is added.
  static constexpr Timeout bucketDefault() noexcept { return Timeout(Kind::kBucketDefault, 0); }
  // Never expires. Internal use only.
  static constexpr Timeout infinite() noexcept { return Timeout(Kind::kInfinite, 0); }
  // An explicit timeout; nullopt unless kMinMillis <= ms <= kMaxMillis.
  static constexpr std::optional<Timeout> fromMillis(uint64_t ms) noexcept {
    if (ms < kMinMillis || ms > kMaxMillis) return std::nullopt;
    return Timeout(Kind::kExplicit, static_cast<uint16_t>(ms));
  }

  constexpr bool isBucketDefault() const noexcept { return kind_ == Kind::kBucketDefault; }
  constexpr bool isInfinite() const noexcept { return kind_ == Kind::kInfinite; }

  // The deadline of a write added at `now`: now + the explicit timeout, or
  // now + `bucket_default`, or clock::kNever when infinite.
  constexpr clock::TimePoint deadline(clock::TimePoint now,
                                      std::chrono::milliseconds bucket_default) const noexcept {
    switch (kind_) {
      case Kind::kInfinite:
        return clock::kNever;
      case Kind::kBucketDefault:
        return now + bucket_default;
      case Kind::kExplicit:
        break;
    }
    return now + std::chrono::milliseconds(millis_);
  }

  friend constexpr bool operator==(const Timeout&, const Timeout&) = default;

 private:
  enum class Kind : uint8_t { kBucketDefault, kExplicit, kInfinite };
  constexpr Timeout(Kind kind, uint16_t millis) noexcept : kind_(kind), millis_(millis) {}

  Kind kind_;
  uint16_t millis_;
};

struct Requirements {
  Level level = Level::kMajority;
  Timeout timeout = Timeout::bucketDefault();

  friend constexpr bool operator==(const Requirements&, const Requirements&) = default;
};

}  // namespace syncwrite::durability
