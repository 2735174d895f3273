// config::readFile, the project's one whole-file reader.
#include "config/read_file.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::config {
namespace {

using ::testing::HasSubstr;

std::filesystem::path tempPath(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) / (name + "." + std::to_string(::getpid()));
}

TEST(ReadFile, ReturnsEveryByteIncludingNulsAndALargeTail) {
  const auto path = tempPath("read_file_bytes");
  std::string bytes("a\0b\n", 4);
  bytes += std::string(size_t{200} * 1024, 'x');  // more than one read
  std::ofstream(path, std::ios::binary) << bytes;
  absl::StatusOr<std::string> text = readFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, bytes);
  std::filesystem::remove(path);
}

TEST(ReadFile, AnEmptyFileIsAnEmptyString) {
  const auto path = tempPath("read_file_empty");
  std::ofstream(path).close();
  absl::StatusOr<std::string> text = readFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "");
  std::filesystem::remove(path);
}

TEST(ReadFile, AFileOfUnknownSizeReadsWhole) {
  // /proc files report size 0 but have content.
  absl::StatusOr<std::string> text = readFile("/proc/self/stat");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr(std::to_string(::getpid())));
}

TEST(ReadFile, AMissingFileIsNotFoundNamingThePath) {
  absl::StatusOr<std::string> text = readFile("/nonexistent/syncwrite/file");
  EXPECT_TRUE(absl::IsNotFound(text.status())) << text.status();
  EXPECT_THAT(text.status().message(), HasSubstr("/nonexistent/syncwrite/file"));
}

TEST(ReadFile, ADirectoryIsAnErrorNotAnEmptyString) {
  absl::StatusOr<std::string> text = readFile(::testing::TempDir());
  EXPECT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("cannot read"));
}

}  // namespace
}  // namespace syncwrite::config
