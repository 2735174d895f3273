#include <gtest/gtest.h>

#include "config/read_file.h"
#include "config/schema.h"
#include "config/schema_doc.h"

namespace syncwrite::config {
namespace {

TEST(ConfigurationDoc, IsUpToDateWithTheSchema) {
  const std::string path = SYNCWRITE_SOURCE_DIR "/docs/configuration.md";
  absl::StatusOr<std::string> text = readFile(path);
  ASSERT_TRUE(text.ok()) << text.status() << ": run ./dev docs";
  EXPECT_EQ(*text, renderConfigurationMarkdown(Schema::builtin()))
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
