// Tables, comparisons and the JSON document of the idle-CPU harness.
#include "bench/idle_cpu/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

using ::testing::HasSubstr;

ScenarioResult Result(const std::string& group, const std::string& mode, unsigned buckets,
                      uint64_t ticks, const std::string& clock = "coarse") {
  ScenarioResult r;
  r.scenario.group = group;
  r.scenario.mode = mode;
  r.scenario.buckets = buckets;
  r.scenario.visitor_clock = clock;
  r.window_s = 10;
  r.clk_tck = 100;
  // schedstat runtime: ticks × 10 ms + 1 ms, so a zero-tick run still shows some.
  const uint64_t ns = ticks * 10'000'000 + 1'000'000;
  r.cpu = ComputeUsage(CpuSample{0, {ThreadStat{1, "NonIoPool0", 0, 0}}},
                       CpuSample{ticks, {ThreadStat{1, "NonIoPool0", ticks, ns}}}, 100, 10);
  r.timeout_task_runs = mode == "polling" ? 400 * buckets : 0;
  r.stats_window_s = 10;
  r.timeout_task_runs_per_s = static_cast<double>(r.timeout_task_runs) / 10.0;
  r.timeout_tasks = mode == "polling" ? buckets : 1024 * buckets;
  r.executor_nonio_threads = 2;
  return r;
}

TEST(IdleCpuReport, PollingVsEventDrivenUsesTheLargestBucketCountWithBothModes) {
  std::vector<ScenarioResult> results = {
      Result("idle", "polling", 1, 10),   Result("idle", "event-driven", 1, 5),
      Result("idle", "polling", 30, 300), Result("idle", "event-driven", 30, 3),
      Result("idle", "polling", 50, 900),  // no event-driven run at 50
  };
  std::optional<Comparison> c = PollingVsEventDriven(results);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->buckets, 30u);
  EXPECT_DOUBLE_EQ(c->numerator_percent, 30.0);
  EXPECT_DOUBLE_EQ(c->denominator_percent, 0.3);
  ASSERT_TRUE(c->ratio.has_value());
  EXPECT_DOUBLE_EQ(*c->ratio, 100.0);
}

TEST(IdleCpuReport, AZeroDenominatorGivesNoRatioButALowerBound) {
  std::vector<ScenarioResult> results = {Result("idle", "polling", 30, 300),
                                         Result("idle", "event-driven", 30, 0)};
  std::optional<Comparison> c = PollingVsEventDriven(results);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->ratio.has_value());
  EXPECT_DOUBLE_EQ(c->ratio_at_least, 300.0);  // 30% over one tick (0.1%)
  EXPECT_THAT(FormatSummary(results), HasSubstr(">= 300.0x"));
  // 3.001 s over 1 ms of schedstat runtime.
  ASSERT_TRUE(c->runtime_ratio.has_value());
  EXPECT_DOUBLE_EQ(*c->runtime_ratio, 3001.0);
  EXPECT_THAT(FormatSummary(results), HasSubstr("schedstat 3001.0x"));
}

TEST(IdleCpuReport, NoComparisonWithoutBothModes) {
  EXPECT_FALSE(PollingVsEventDriven({Result("idle", "polling", 30, 300)}).has_value());
  EXPECT_FALSE(SlowClockComparison({Result("idle", "polling", 30, 300)}).has_value());
}

TEST(IdleCpuReport, SlowClockIsSyscallOverCoarse) {
  std::vector<ScenarioResult> results = {Result("slow_clock", "polling", 3, 150, "syscall"),
                                         Result("slow_clock", "polling", 3, 15, "coarse")};
  std::optional<Comparison> c = SlowClockComparison(results);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->buckets, 3u);
  EXPECT_DOUBLE_EQ(*c->ratio, 10.0);
  EXPECT_THAT(FormatSummary(results), HasSubstr("syscall / coarse: 10.0x"));
}

TEST(IdleCpuReport, ScenarioTableShowsProcessThreadsAndTaskRuns) {
  const std::string table = FormatScenario(Result("idle", "polling", 30, 300), 1);
  EXPECT_THAT(table, HasSubstr("polling B=30"));
  EXPECT_THAT(table, HasSubstr("30.00% of one core"));
  EXPECT_THAT(table, HasSubstr("NonIoPool0 [1]"));
  EXPECT_THAT(table, HasSubstr("schedstat 30.010%"));
  EXPECT_THAT(table, HasSubstr("1200.0/s"));
}

TEST(IdleCpuReport, JsonHasEveryDocumentedField) {
  Options options;
  options.slow_clock = true;
  MachineInfo machine{2, "Some CPU", "Linux 6.1", "tsc", 100};
  std::vector<ScenarioResult> results = {Result("idle", "polling", 30, 300),
                                         Result("idle", "event-driven", 30, 0)};
  const nlohmann::json doc = ResultsJson(machine, options, results);
  for (const char* key : {"harness", "format", "machine", "options", "scenarios", "comparisons"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["machine"]["cores"], 2);
  EXPECT_EQ(doc["machine"]["clock_source"], "tsc");
  EXPECT_EQ(doc["options"]["buckets"], nlohmann::json({1, 10, 30}));
  ASSERT_EQ(doc["scenarios"].size(), 2u);
  const nlohmann::json& s = doc["scenarios"][0];
  for (const char* key :
       {"group", "name", "mode", "buckets", "vbuckets_per_bucket", "visitor_clock",
        "timeout_task_interval_ms", "window_s", "process_cpu_ticks", "process_cpu_percent",
        "resolution_percent", "process_runtime_ns", "process_runtime_percent", "threads",
        "timeout_task_runs", "timeout_task_runs_per_s", "stats_window_s", "timeout_tasks",
        "executor_nonio_threads"}) {
    EXPECT_TRUE(s.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(s["process_cpu_percent"].get<double>(), 30.0);
  EXPECT_EQ(s["threads"][0]["name"], "NonIoPool0");
  EXPECT_EQ(s["threads"][0]["runtime_ns"], 3'001'000'000u);
  EXPECT_EQ(s["process_runtime_ns"], 3'001'000'000u);
  const nlohmann::json& c = doc["comparisons"]["polling_vs_event_driven"];
  EXPECT_TRUE(c["ratio"].is_null());
  EXPECT_DOUBLE_EQ(c["ratio_at_least"].get<double>(), 300.0);
  EXPECT_DOUBLE_EQ(c["runtime_ratio"].get<double>(), 3001.0);
  EXPECT_TRUE(doc["comparisons"]["slow_clock_syscall_vs_coarse"].is_null());
}

}  // namespace
}  // namespace syncwrite::bench
