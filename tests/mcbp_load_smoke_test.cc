// Smoke run of bench/mcbp_load against the real syncwrite-server: one second
// of pipelined SETs and GETs of preloaded keys (so every GET hits). Not
// durable: two SyncWrites on one random key would answer SyncWriteInProgress
// (0xa2), which is the server's right. It checks the run happened and every
// answer was Success; it asserts no throughput or latency figure.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/server_test_support.h"

#ifndef SYNCWRITE_MCBP_LOAD_BIN
#error "SYNCWRITE_MCBP_LOAD_BIN must name the mcbp_load binary"
#endif

namespace syncwrite::bench {
namespace {

TEST(McbpLoadSmoke, OneSecondOfMixAgainstTheServerIsAllSuccess) {
  server::testing::ServerProcess server;
  ASSERT_TRUE(server.start());
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("mcbp_load_smoke_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path json_path = dir / "load.json";
  const std::string command = std::string("'") + SYNCWRITE_MCBP_LOAD_BIN + "' --port " +
                              std::to_string(server.port()) +
                              " --duration 1 --connections 2 --depth 8 --keys 1000 --preload "
                              "--op mix --set-ratio 0.5 "
                              "--report-interval 0.5 --json '" +
                              json_path.string() + "' > '" + (dir / "out.txt").string() + "' 2>&1";
  const int rc = std::system(command.c_str());
  const std::string output = config::readFile(dir / "out.txt").value_or("");
  ASSERT_EQ(rc, 0) << command << "\n" << output;

  const nlohmann::json doc = nlohmann::json::parse(config::readFile(json_path).value_or("null"));
  ASSERT_TRUE(doc.is_object()) << output;
  EXPECT_GT(doc["ops"].get<uint64_t>(), 0u) << doc.dump(2);
  EXPECT_TRUE(doc["errors"].empty()) << doc.dump(2);
  ASSERT_EQ(doc["statuses"].size(), 1u) << doc.dump(2);
  EXPECT_EQ(doc["statuses"]["0x00"].get<uint64_t>(), doc["ops"].get<uint64_t>());
  EXPECT_EQ(doc["preload"]["statuses"]["0x00"].get<uint64_t>(), 1000u) << doc.dump(2);
  EXPECT_GT(doc["latency_us"]["max"].get<double>(), 0) << doc.dump(2);
  EXPECT_FALSE(doc["intervals"].empty()) << doc.dump(2);
}

}  // namespace
}  // namespace syncwrite::bench
