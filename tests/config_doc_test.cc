#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "config/schema.h"
#include "config/schema_doc.h"

namespace syncwrite::config {
namespace {

TEST(ConfigurationDoc, IsUpToDateWithTheSchema) {
  const std::string path = std::string(SYNCWRITE_SOURCE_DIR) + "/docs/configuration.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << ": run ./dev docs";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), renderConfigurationMarkdown(Schema::builtin()))
      << path << " is stale: config/schema.json changed. Run ./dev docs and commit the result.";
}

TEST(ConfigurationDoc, ListsEveryKeyWithItsDescription) {
  const std::string doc = renderConfigurationMarkdown(Schema::builtin());
  for (const auto& k : Schema::builtin().keys()) {
    EXPECT_NE(doc.find("`" + k.name + "`"), std::string::npos) << k.name;
    EXPECT_NE(doc.find(k.description), std::string::npos) << k.name;
  }
}

}  // namespace
}  // namespace syncwrite::config
