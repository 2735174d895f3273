// The replica metrics of a two-process cluster, read from the active's
// /metrics endpoint as Prometheus scrapes it: every prepare the replica
// process acknowledged over DCP is one sample of kv_replica_ack_duration_seconds,
// and kv_replica_ack_seqno_lag is how far its acks are behind — 0 once it has
// acknowledged everything, more while it is stopped (SIGSTOP) with a prepare
// it has not acknowledged.
#include <signal.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>

#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Status;
using testing::durable;
using testing::eventually;
using testing::ServerProcess;

// Vbucket 0's chain is [n1, n2] (replication_process_test.cc's layout).
constexpr uint16_t kVbOnN1 = 0;

// The body of GET /metrics on `port`, as the cluster's Administrator.
std::string scrapeMetrics(uint16_t port) {
  boost::asio::ip::tcp::iostream http("127.0.0.1", std::to_string(port));
  // "Administrator:password", base64.
  http << "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n"
       << "Authorization: Basic QWRtaW5pc3RyYXRvcjpwYXNzd29yZA==\r\n\r\n"
       << std::flush;
  std::stringstream body;
  body << http.rdbuf();
  return body.str();
}

// The value of the sample of `name` whose labels include every one of
// `labels` (`key="value"` each), or nullopt.
std::optional<double> sampleOf(const std::string& text, const std::string& name,
                               const std::vector<std::string>& labels) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name + "{")) continue;
    bool all = true;
    for (const std::string& label : labels) all = all && absl::StrContains(line, label);
    if (!all) continue;
    double value = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) return value;
  }
  return std::nullopt;
}

TEST(ReplicationMetrics, TheReplicaProcessAcksEveryPrepareAndItsLagShowsWhileItIsStopped) {
  ServerProcess n1;
  ServerProcess n2;
  std::string config = testing::clusterConfig({&n1, &n2}, 1, 4);
  config.insert(1, R"("prometheus_port": 0, )");
  ASSERT_TRUE(n1.start(config, {"--node", "n1"}));
  ASSERT_TRUE(n2.start(config, {"--node", "n2"}));
  protocol::Client a = n1.connect();
  ASSERT_TRUE(eventually([&] { return testing::statValue(a, "", "replication_streams") == 2; }));
  const auto metrics_port =
      parseNumber<uint16_t>(testing::fileText(n1.portFile().string() + ".prometheus"), 1);
  ASSERT_TRUE(metrics_port.has_value());

  constexpr int kWrites = 20;
  for (int i = 0; i < kWrites; ++i) {
    auto r = a.set(kVbOnN1, absl::StrCat("k", i), "v", durable(10000));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->status, Status::kSuccess) << r->errorContext();
  }
  const std::vector<std::string> n2_majority = {R"(bucket="default")", R"(replica="n2")",
                                                R"(level="majority")"};
  // Each commit needed n2's ack; the producer counts it right after.
  EXPECT_TRUE(eventually([&] {
    return sampleOf(scrapeMetrics(*metrics_port), "kv_replica_ack_duration_seconds_count",
                    n2_majority) == kWrites;
  })) << scrapeMetrics(*metrics_port);
  const std::string text = scrapeMetrics(*metrics_port);
  EXPECT_EQ(sampleOf(text, "kv_replica_ack_seqno_lag", {R"(replica="n2")"}), 0.0) << text;
  // None took an hour: every sample sits under the 60 s edge.
  EXPECT_EQ(sampleOf(text, "kv_replica_ack_duration_seconds_bucket",
                     {R"(replica="n2")", R"(level="majority")", R"(le="60")"}),
            kWrites)
      << text;

  // Stopped, n2 acks nothing: the prepare it missed is its lag.
  ASSERT_TRUE(n2.stop());
  auto missed = a.set(kVbOnN1, "missed", "v", durable(200));
  ASSERT_TRUE(missed.ok()) << missed.status();
  EXPECT_EQ(missed->status, Status::kSyncWriteAmbiguous);
  const std::optional<double> lag =
      sampleOf(scrapeMetrics(*metrics_port), "kv_replica_ack_seqno_lag", {R"(replica="n2")"});
  EXPECT_TRUE(lag.has_value() && *lag >= 1) << scrapeMetrics(*metrics_port);
  n2.signal(SIGCONT);
  // Resumed, it receives the abort and the next prepare, and acks past both.
  auto after = a.set(kVbOnN1, "after", "v", durable(10000));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->status, Status::kSuccess) << after->errorContext();
  EXPECT_TRUE(eventually([&] {
    return sampleOf(scrapeMetrics(*metrics_port), "kv_replica_ack_seqno_lag",
                    {R"(replica="n2")"}) == 0.0;
  })) << scrapeMetrics(*metrics_port);
}

}  // namespace
}  // namespace syncwrite::server
