#include "server/protocol/command_values.h"

#include <array>
#include <utility>

namespace syncwrite::server::protocol {

namespace {
constexpr std::array<std::pair<VbucketState, std::string_view>, 4> kStateNames{{
    {VbucketState::kActive, "active"},
    {VbucketState::kReplica, "replica"},
    {VbucketState::kPending, "pending"},
    {VbucketState::kDead, "dead"},
}};
}  // namespace

std::optional<ParamType> paramTypeFromWire(uint32_t value) noexcept {
  if (value < static_cast<uint32_t>(ParamType::kFlush) ||
      value > static_cast<uint32_t>(ParamType::kConfig)) {
    return std::nullopt;
  }
  return static_cast<ParamType>(value);
}

std::optional<VbucketState> vbucketStateFromWire(uint32_t value) noexcept {
  if (value < static_cast<uint32_t>(VbucketState::kActive) ||
      value > static_cast<uint32_t>(VbucketState::kDead)) {
    return std::nullopt;
  }
  return static_cast<VbucketState>(value);
}

std::optional<VbucketState> vbucketStateFromString(std::string_view name) noexcept {
  for (const auto& [state, spelling] : kStateNames) {
    if (spelling == name) return state;
  }
  return std::nullopt;
}

std::string_view toString(VbucketState state) noexcept {
  for (const auto& [s, spelling] : kStateNames) {
    if (s == state) return spelling;
  }
  return "invalid";
}

}  // namespace syncwrite::server::protocol
