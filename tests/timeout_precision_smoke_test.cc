// A smoke run of bench/timeout_precision, the program, against the real
// syncwrite-server it starts itself: one second of durable SETs in each
// timeout mode, whose replica never acknowledges. Checks that the driver
// completed a run in each mode and that every write it sent was answered
// SyncWriteAmbiguous exactly once and never before its timeout, and that
// the report carries both CPU figures (the driver's own says whether it
// competed with the server). It asserts no lateness or CPU figure.
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/read_file.h"

#ifndef SYNCWRITE_TIMEOUT_PRECISION_BIN
#error "SYNCWRITE_TIMEOUT_PRECISION_BIN must name the timeout_precision binary"
#endif
#ifndef SYNCWRITE_SERVER_BINARY
#error "SYNCWRITE_SERVER_BINARY must name the syncwrite-server binary"
#endif

namespace syncwrite::bench {
namespace {

TEST(TimeoutPrecisionSmoke, EveryWriteOfBothModesIsAnsweredAmbiguousOnceAndNeverEarly) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("timeout_precision_smoke_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path json_path = dir / "report.json";
  const std::string command =
      std::string("'") + SYNCWRITE_TIMEOUT_PRECISION_BIN + "' --server '" +
      SYNCWRITE_SERVER_BINARY +
      "' --rate 200 --connections 50 --min_timeout_ms 20 --max_timeout_ms 40 --duration_s 1 "
      "--behind_head=false --modes event-driven,polling --json '" +
      json_path.string() + "' > '" + (dir / "out.txt").string() + "' 2>&1";
  const int rc = std::system(command.c_str());
  const std::string output = config::readFile(dir / "out.txt").value_or("");
  ASSERT_EQ(rc, 0) << command << "\n" << output;
  const nlohmann::json doc =
      nlohmann::json::parse(config::readFile(json_path).value_or("null"), nullptr, false);
  ASSERT_TRUE(doc.is_object()) << output;
  ASSERT_EQ(doc["runs"].size(), 2u) << doc.dump(2);
  std::set<std::string> modes;
  for (const nlohmann::json& run : doc["runs"]) {
    SCOPED_TRACE(run.dump(2));
    modes.insert(run["mode"].get<std::string>());
    EXPECT_GT(run["sent"].get<uint64_t>(), 0u);
    // Each write sent is answered once: an answer per write, none extra, none missing.
    EXPECT_EQ(run["count"].get<uint64_t>(), run["sent"].get<uint64_t>());
    EXPECT_EQ(run["unexpected"].get<uint64_t>(), 0u);
    EXPECT_EQ(run["unanswered"].get<uint64_t>(), 0u);
    EXPECT_EQ(run["early"].get<uint64_t>(), 0u);
    EXPECT_GE(run["server_cpu_pct"].get<double>(), 0.0);
    EXPECT_GE(run["driver_cpu_pct"].get<double>(), 0.0);
  }
  EXPECT_EQ(modes, (std::set<std::string>{"event-driven", "polling"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace syncwrite::bench
