// server/log.h: lines go to stderr, or whole to the sink when one is set.
#include "server/log.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace syncwrite::server {
namespace {

std::vector<std::string>& sunk() {
  static std::vector<std::string> lines;
  return lines;
}

TEST(ServerLog, ASinkTakesWholeLinesInsteadOfStderrUntilReset) {
  setLogSink([](std::string_view line) { sunk().emplace_back(line); });
  testing::internal::CaptureStderr();
  logLine("to the sink");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(sunk().size(), 1u);
  EXPECT_TRUE(sunk()[0].ends_with("Z syncwrite-server: to the sink\n")) << sunk()[0];

  setLogSink(nullptr);
  testing::internal::CaptureStderr();
  logLine("to stderr");
  EXPECT_TRUE(testing::internal::GetCapturedStderr().ends_with("syncwrite-server: to stderr\n"));
  EXPECT_EQ(sunk().size(), 1u);
}

}  // namespace
}  // namespace syncwrite::server
