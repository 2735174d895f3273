#include "server/protocol/command_values.h"

#include <array>
#include <utility>

#include "server/protocol/byte_order.h"

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

void appendVbSeqno(std::string& out, VbSeqno entry) {
  wire::append16(out, entry.vbucket);
  wire::append64(out, entry.seqno);
}

std::optional<std::vector<VbSeqno>> parseVbSeqnos(std::string_view value) {
  if (value.size() % kVbSeqnoSize != 0) return std::nullopt;
  std::vector<VbSeqno> entries;
  entries.reserve(value.size() / kVbSeqnoSize);
  for (size_t at = 0; at < value.size(); at += kVbSeqnoSize) {
    entries.push_back({wire::load16(value, at), wire::load64(value, at + 2)});
  }
  return entries;
}

}  // namespace syncwrite::server::protocol
