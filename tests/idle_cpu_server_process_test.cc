// ServerProcess of the idle-CPU harness, against shell scripts that behave
// like a server (or fail to).
#include "bench/idle_cpu/server_process.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

class ServerProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("idle_cpu_sp_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A fake server: `body` runs with $6 = the port file path.
  std::filesystem::path Script(const std::string& body) {
    std::filesystem::path path = dir_ / "server.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }

  absl::StatusOr<std::unique_ptr<ServerProcess>> Start(const std::filesystem::path& server,
                                                       milliseconds timeout = milliseconds(30000)) {
    return ServerProcess::Start(server, dir_ / "config.json", dir_ / "port", dir_ / "server.log",
                                timeout);
  }

  std::filesystem::path dir_;
};

// Writes the port atomically, then waits for SIGTERM and exits 0.
constexpr char kWellBehaved[] =
    "trap 'echo stopping; exit 0' TERM\n"
    "echo \"args: $*\"\n"
    "echo 4242 > \"$6.tmp\" && mv \"$6.tmp\" \"$6\"\n"
    "sleep 300 & wait $!";

TEST_F(ServerProcessTest, StartsWaitsForThePortFileAndStopsCleanly) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> p = Start(Script(kWellBehaved));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->port(), 4242);
  EXPECT_GT((*p)->pid(), 0);
  EXPECT_TRUE((*p)->Stop(milliseconds(30000)).ok());
  EXPECT_THAT((*p)->LogTail(),
              HasSubstr("--config " + (dir_ / "config.json").string() + " --port 0 --port-file"));
  EXPECT_THAT((*p)->LogTail(), HasSubstr("stopping"));
}

TEST_F(ServerProcessTest, AServerThatExitsBeforeListeningIsReportedWithItsLog) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> p =
      Start(Script("echo 'config: bad key' >&2\nexit 3"));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("exit status 3"));
  EXPECT_THAT(p.status().message(), HasSubstr("config: bad key"));
}

TEST_F(ServerProcessTest, NoPortFileWithinTheGuardIsADeadline) {
  // The guard is the hang guard itself, not a timing assertion.
  absl::StatusOr<std::unique_ptr<ServerProcess>> p =
      Start(Script("echo silent\nsleep 300 & wait $!"), milliseconds(200));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(p.status().message(), HasSubstr("silent"));
}

TEST_F(ServerProcessTest, AGarbledPortFileIsRefused) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> p =
      Start(Script("echo nope > \"$6\"\nsleep 300 & wait $!"));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ServerProcessTest, AMissingBinaryIsRefused) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> p = Start(dir_ / "no-such-server");
  EXPECT_FALSE(p.ok());
}

TEST_F(ServerProcessTest, ANonZeroExitOnSigtermIsAnError) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> p = Start(Script(
      "trap 'exit 5' TERM\necho 4242 > \"$6.tmp\" && mv \"$6.tmp\" \"$6\"\nsleep 300 & wait $!"));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status s = (*p)->Stop(milliseconds(30000));
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("exit status 5"));
}

TEST_F(ServerProcessTest, AServerIgnoringSigtermIsKilledAfterTheGuard) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> p =
      Start(Script("trap '' TERM\necho 4242 > \"$6.tmp\" && mv \"$6.tmp\" \"$6\"\n"
                   "while :; do sleep 300; done"));
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status s = (*p)->Stop(milliseconds(200));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.message(), HasSubstr("killed"));
}

}  // namespace
}  // namespace syncwrite::bench
