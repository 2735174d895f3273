// Durability levels: how durable a SyncWrite must be before it commits.
//
// The numeric values are those of the memcached binary protocol's durability
// frame (couchbase/kv_engine docs/BinaryProtocol.md, "Durability Requirement"):
// 0 none, 1 majority, 2 majority and persist on master, 3 persist to majority.
// Config spells them as durability_min_level does: "none", "majority",
// "majority_and_persist_on_master", "persist_to_majority".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace syncwrite::durability {

enum class Level : uint8_t {
  kNone = 0,                        // not a SyncWrite
  kMajority = 1,                    // in memory on a majority of every chain
  kMajorityAndPersistOnMaster = 2,  // ... and persisted on the active
  kPersistToMajority = 3,           // persisted on a majority of every chain
};
inline constexpr size_t kLevelCount = 4;  // kNone included, so a Level's value indexes

// The level for a protocol byte, or nullopt for a value no level has (the
// caller answers "invalid durability level").
std::optional<Level> levelFromWire(uint8_t byte) noexcept;

// The level for its config spelling, or nullopt: for text a user typed (the
// CLI). The durability_min_level key is read as config_values.h says.
std::optional<Level> levelFromString(std::string_view name) noexcept;

// The config spelling: "majority_and_persist_on_master".
std::string_view toString(Level level) noexcept;

// True when the active must have persisted the prepare before it commits.
constexpr bool needsActivePersistence(Level level) noexcept {
  return level == Level::kMajorityAndPersistOnMaster || level == Level::kPersistToMajority;
}

// True when the replicas' acknowledgements must be of persisted prepares.
constexpr bool needsReplicaPersistence(Level level) noexcept {
  return level == Level::kPersistToMajority;
}

// The stronger of two levels (durability_min_level raises a request's level).
constexpr Level atLeast(Level requested, Level minimum) noexcept {
  return static_cast<uint8_t>(requested) >= static_cast<uint8_t>(minimum) ? requested : minimum;
}

}  // namespace syncwrite::durability
