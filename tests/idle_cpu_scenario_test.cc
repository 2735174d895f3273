// Scenarios, server configurations, port files and machine facts of the
// idle-CPU harness.
#include "bench/idle_cpu/machine.h"
#include "bench/idle_cpu/scenario.h"
#include "bench/idle_cpu/server_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

using ::testing::HasSubstr;

TEST(IdleCpuScenario, GridThenSlowClockPair) {
  Options o;
  o.buckets = {1, 30};
  o.modes = {"polling", "event-driven"};
  o.slow_clock = true;
  std::vector<Scenario> s = ScenariosFor(o);
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(s[0].Name(), "polling B=1");
  EXPECT_EQ(s[1].Name(), "event-driven B=1");
  EXPECT_EQ(s[3].Name(), "event-driven B=30");
  EXPECT_EQ(s[4].Name(), "slow_clock polling B=3 clock=syscall");
  EXPECT_EQ(s[5].Name(), "slow_clock polling B=3 clock=coarse");
  o.slow_clock = false;
  EXPECT_EQ(ScenariosFor(o).size(), 4u);
}

TEST(IdleCpuScenario, ServerConfigHasOneBucketEntryPerBucket) {
  Scenario s;
  s.group = "slow_clock";
  s.buckets = 3;
  s.mode = "polling";
  s.visitor_clock = "syscall";
  const nlohmann::json c = ServerConfigFor(s);
  EXPECT_EQ(c["node_name"], "active");
  EXPECT_EQ(c["num_nonio_threads"], 0);
  ASSERT_EQ(c["buckets"].size(), 3u);
  const nlohmann::json& b2 = c["buckets"]["b2"];
  EXPECT_EQ(b2["durability_timeout_mode"], "polling");
  EXPECT_EQ(b2["durability_visitor_clock"], "syscall");
  EXPECT_EQ(b2["durability_timeout_task_interval"], 25);
  EXPECT_EQ(b2["max_vbuckets"], 1024);
  EXPECT_EQ(b2["replicas"], nlohmann::json({"replica1"}));
  EXPECT_EQ(b2["simulated_replicas"]["replica1"]["ack_delay_ms"], 1);
}

TEST(IdleCpuPortFile, ParsesDigitsWithSurroundingWhitespace) {
  EXPECT_EQ(ParsePortFile("11210").value(), 11210);
  EXPECT_EQ(ParsePortFile("40001\n").value(), 40001);
  EXPECT_EQ(ParsePortFile(" 80\r\n").value(), 80);
  for (const char* bad : {"", "\n", "0", "65536", "12ab", "8 0", "-1"}) {
    absl::StatusOr<uint16_t> p = ParsePortFile(bad);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(p.status().message(), HasSubstr("port file"));
  }
}

TEST(IdleCpuMachine, CpuModelIsTheFirstModelNameLine) {
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\n"
                                "model name\t: other\n"),
            "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(CpuModelFromCpuinfo("processor : 0\n"), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo(""), "unknown");
}

TEST(IdleCpuMachine, LiveMachineHasCoresAndATickRate) {
  const MachineInfo m = ReadMachineInfo();
  EXPECT_GE(m.cores, 1u);
  EXPECT_GT(m.clk_tck, 0);
  EXPECT_FALSE(m.kernel.empty());
}

}  // namespace
}  // namespace syncwrite::bench
