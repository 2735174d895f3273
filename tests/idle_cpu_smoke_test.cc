// Smoke run of the real idle-CPU harness against the real syncwrite-server:
// one bucket, both modes plus the slow-clock pair, a 1 s window. It checks the
// JSON document has every field and that what it says is coherent; it asserts
// no CPU figure (those are the harness's output, not a property of the code).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/read_file.h"

#ifndef SYNCWRITE_IDLE_CPU_BIN
#error "SYNCWRITE_IDLE_CPU_BIN must name the idle_cpu binary"
#endif
#ifndef SYNCWRITE_SERVER_BIN
#error "SYNCWRITE_SERVER_BIN must name the syncwrite-server binary"
#endif

namespace syncwrite::bench {
namespace {

void ExpectKeys(const nlohmann::json& object, std::initializer_list<const char*> keys,
                const std::string& where) {
  ASSERT_TRUE(object.is_object()) << where << " is not an object: " << object;
  for (const char* key : keys) EXPECT_TRUE(object.contains(key)) << where << " lacks " << key;
}

TEST(IdleCpuSmoke, OneBucketBothModesAndSlowClockWriteACompleteJson) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("idle_cpu_smoke_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path json_path = dir / "idle_cpu.json";
  const std::string command =
      std::string("'") + SYNCWRITE_IDLE_CPU_BIN + "' --server '" + SYNCWRITE_SERVER_BIN +
      "' --buckets 1 --modes polling,event-driven --window 1 --settle 0.2 --slow-clock "
      "--slow-clock-buckets 1 --json '" +
      json_path.string() + "' > '" + (dir / "out.txt").string() + "' 2>&1";
  const int rc = std::system(command.c_str());
  const std::string output = config::readFile(dir / "out.txt").value_or("");
  ASSERT_EQ(rc, 0) << command << "\n" << output;

  absl::StatusOr<std::string> json = config::readFile(json_path);
  ASSERT_TRUE(json.ok()) << "no JSON at " << json_path << ": " << json.status() << "\n" << output;
  const nlohmann::json doc = nlohmann::json::parse(*json);
  ExpectKeys(doc,
             {"harness", "format", "machine", "options", "scenarios", "comparisons", "targets"},
             "document");
  ExpectKeys(doc["machine"], {"cores", "cpu_model", "kernel", "clock_source", "clk_tck"},
             "machine");
  ExpectKeys(doc["options"], {"buckets", "modes", "window_s", "settle_s", "slow_clock"}, "options");

  ASSERT_EQ(doc["scenarios"].size(), 4u) << doc.dump(2);
  std::set<std::string> names;
  for (const nlohmann::json& s : doc["scenarios"]) {
    ExpectKeys(s,
               {"group", "name", "mode", "buckets", "vbuckets_per_bucket", "visitor_clock",
                "timeout_task_interval_ms", "window_s", "process_cpu_ticks", "process_cpu_percent",
                "resolution_percent", "process_runtime_ns", "process_runtime_percent", "threads",
                "timeout_task_runs", "timeout_task_runs_per_s", "stats_window_s", "timeout_tasks",
                "executor_nonio_threads"},
               "scenario");
    names.insert(s["name"].get<std::string>());
    EXPECT_EQ(s["buckets"], 1);
    EXPECT_GT(s["window_s"].get<double>(), 0);
    EXPECT_GE(s["process_cpu_percent"].get<double>(), 0);
    EXPECT_GE(s["executor_nonio_threads"].get<int>(), 1);
    ASSERT_FALSE(s["threads"].empty());
    bool named_pool_thread = false;
    for (const nlohmann::json& t : s["threads"]) {
      ExpectKeys(t, {"tid", "name", "cpu_ticks", "cpu_percent", "runtime_ns"}, "thread");
      named_pool_thread = named_pool_thread || t["name"].get<std::string>().rfind("NonIo", 0) == 0;
    }
    EXPECT_TRUE(named_pool_thread) << "no NonIo* thread in " << s["threads"];
    if (s["mode"] == "event-driven") {
      // The design's promise: an idle event-driven bucket runs no timeout task.
      EXPECT_EQ(s["timeout_task_runs"], 0) << s["name"];
    } else {
      // A polling bucket's task runs every 25 ms: at least once in a second.
      EXPECT_GT(s["timeout_task_runs"].get<uint64_t>(), 0u) << s["name"];
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"polling B=1", "event-driven B=1",
                                          "slow_clock polling B=1 clock=syscall",
                                          "slow_clock polling B=1 clock=coarse"}));
  for (const char* c : {"polling_vs_event_driven", "slow_clock_syscall_vs_coarse"}) {
    ExpectKeys(doc["comparisons"][c],
               {"buckets", "numerator", "denominator", "numerator_percent", "denominator_percent",
                "ratio", "ratio_at_least", "runtime_ratio"},
               c);
  }
  ExpectKeys(doc["targets"]["event_driven_idle"],
             {"buckets", "max_percent", "process_cpu_percent", "timeout_task_runs_per_s", "met"},
             "targets.event_driven_idle");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace syncwrite::bench
