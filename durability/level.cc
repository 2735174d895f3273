#include "durability/level.h"

#include <array>
#include <utility>

namespace syncwrite::durability {

namespace {
constexpr std::array<std::pair<Level, std::string_view>, 4> kNames{{
    {Level::kNone, "none"},
    {Level::kMajority, "majority"},
    {Level::kMajorityAndPersistOnMaster, "majority_and_persist_on_master"},
    {Level::kPersistToMajority, "persist_to_majority"},
}};
}  // namespace

std::optional<Level> levelFromWire(uint8_t byte) noexcept {
  if (byte > static_cast<uint8_t>(Level::kPersistToMajority)) return std::nullopt;
  return static_cast<Level>(byte);
}

std::optional<Level> levelFromString(std::string_view name) noexcept {
  for (const auto& [level, spelling] : kNames) {
    if (spelling == name) return level;
  }
  return std::nullopt;
}

std::string_view toString(Level level) noexcept {
  for (const auto& [l, spelling] : kNames) {
    if (l == level) return spelling;
  }
  return "invalid";
}

}  // namespace syncwrite::durability
