// The durability layer's enum keys: every value config/schema.json allows
// converts, through the path the bucket uses (load the spelling, read the
// typed key, convert), to the domain value of the same spelling. A value added
// to the schema without a case in durability/config_values.cc aborts here (and
// is a -Wswitch warning when it compiles).
#include <string>

#include <gtest/gtest.h>

#include "config/configuration.h"
#include "durability/config_values.h"

namespace syncwrite::durability {
namespace {

namespace keys = config::keys;

const std::vector<std::string>& allowedValues(std::string_view key) {
  const config::KeySpec* spec = config::Schema::builtin().find(key);
  EXPECT_NE(spec, nullptr) << key;
  EXPECT_FALSE(spec->values.empty()) << key;
  return spec->values;
}

TEST(DurabilityConfigValues, EveryTimeoutModeTheSchemaAllowsConverts) {
  config::Configuration c(config::Scope::kBucket);
  for (const std::string& value : allowedValues(keys::kDurabilityTimeoutMode.name())) {
    ASSERT_TRUE(c.setFromText(keys::kDurabilityTimeoutMode.name(), value).ok()) << value;
    EXPECT_EQ(toString(timeoutModeOf(c.get(keys::kDurabilityTimeoutMode))), value);
  }
}

TEST(DurabilityConfigValues, EveryMinLevelTheSchemaAllowsConverts) {
  config::Configuration c(config::Scope::kBucket);
  for (const std::string& value : allowedValues(keys::kDurabilityMinLevel.name())) {
    ASSERT_TRUE(c.setFromText(keys::kDurabilityMinLevel.name(), value).ok()) << value;
    EXPECT_EQ(toString(minLevelOf(c.get(keys::kDurabilityMinLevel))), value);
  }
}

TEST(DurabilityConfigValues, EveryVisitorClockTheSchemaAllowsConverts) {
  for (const std::string& value : allowedValues(keys::kDurabilityVisitorClock.name())) {
    config::Configuration c(config::Scope::kBucket);  // not dynamic: loaded, not set
    ASSERT_TRUE(c.loadJson({{keys::kDurabilityVisitorClock.name(), value}}).ok()) << value;
    const clock::ClockRef clock = visitorClockOf(c.get(keys::kDurabilityVisitorClock));
    EXPECT_TRUE(clock.onSteadyTimeline()) << value << ": a real clock";
    EXPECT_GT(clock.now().time_since_epoch().count(), 0) << value;
  }
}

TEST(DurabilityConfigValuesDeathTest, AnEnumeratorNoCaseHandlesAbortsNamingTheKey) {
  EXPECT_DEATH(minLevelOf(static_cast<config::DurabilityMinLevel>(9)),
               "durability_min_level has value 9");
  EXPECT_DEATH(timeoutModeOf(static_cast<config::DurabilityTimeoutMode>(7)),
               "durability_timeout_mode has value 7");
}

}  // namespace
}  // namespace syncwrite::durability
