// The vocabulary of vbucket identity and state.
//
// A vbucket is one of a bucket's max_vbuckets partitions of the key space. Its
// state says what this node does with it: serves it (active), follows an
// active copy elsewhere (replica), is taking it over (pending), or holds it
// only until it is removed (dead).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace syncwrite::vbucket {

using Vbid = uint16_t;

enum class VBucketState : uint8_t { kActive, kReplica, kPending, kDead };

// "active", "replica", "pending", "dead".
std::string_view toString(VBucketState state) noexcept;

// A set of states, e.g. the states a visitor wants to see. A value type of one
// byte; contains() is a shift and a test.
class StateFilter {
 public:
  // The empty set.
  constexpr StateFilter() noexcept = default;
  constexpr StateFilter(std::initializer_list<VBucketState> states) noexcept {
    for (VBucketState s : states) bits_ |= bit(s);
  }

  static constexpr StateFilter all() noexcept {
    return {VBucketState::kActive, VBucketState::kReplica, VBucketState::kPending,
            VBucketState::kDead};
  }

  constexpr bool contains(VBucketState s) const noexcept { return (bits_ & bit(s)) != 0; }
  constexpr bool empty() const noexcept { return bits_ == 0; }

 private:
  static constexpr uint8_t bit(VBucketState s) noexcept {
    return static_cast<uint8_t>(1u << static_cast<unsigned>(s));
  }
  uint8_t bits_ = 0;
};

}  // namespace syncwrite::vbucket
