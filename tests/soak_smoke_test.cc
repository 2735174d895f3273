// A few seconds of bench/soak against the real server, in every preset (so
// the sanitizer builds run it too): load, faults, the final checks and the
// SIGTERM with writes pending, all with no anomaly. The RSS check is left to
// ./dev soak (a release build, minutes long): under a sanitizer the allocator
// keeps freed memory by design.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/read_file.h"

namespace syncwrite::bench::soak {
namespace {

TEST(SoakSmoke, SixSecondsOfLoadAndFaultsEndWithNoAnomaly) {
  const std::filesystem::path dir = ::testing::TempDir();
  const std::filesystem::path json = dir / ("soak_smoke_" + std::to_string(::getpid()) + ".json");
  const std::filesystem::path out = dir / ("soak_smoke_" + std::to_string(::getpid()) + ".txt");
  const std::string command = std::string("'") + SYNCWRITE_SOAK_BIN + "' --server '" +
                              SYNCWRITE_SERVER_BINARY +
                              "' --duration_s 6 --warmup_s 2 --workers 4 --check_rss=false "
                              "--sigterm_writes 50 --json '" +
                              json.string() + "' > '" + out.string() + "' 2>&1";
  const int rc = std::system(command.c_str());
  const std::string output = config::readFile(out).value_or("");
  ASSERT_EQ(rc, 0) << output;
  const nlohmann::json report = nlohmann::json::parse(config::readFile(json).value_or("null"));
  ASSERT_TRUE(report.is_object()) << output;
  EXPECT_EQ(report["anomalies"], 0) << output;
  EXPECT_GT(report["durable_committed"].get<uint64_t>(), 0u) << output;
  EXPECT_GT(report["answers"].get<uint64_t>(), 100u) << output;
  EXPECT_EQ(report["sigterm"]["answered_ambiguous"], 50) << output;
  EXPECT_TRUE(report["sigterm"]["exit_ok"].get<bool>()) << output;
}

}  // namespace
}  // namespace syncwrite::bench::soak
