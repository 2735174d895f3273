// What one scenario measured, and the two ways the harness reports it: a
// table per scenario plus a summary on stdout, and one JSON document.
//
// JSON shape (every key always present; a ratio that cannot be computed is
// null, see Comparison):
//   {"harness": "idle_cpu", "format": 1,
//    "machine": {"cores", "cpu_model", "kernel", "clock_source", "clk_tck"},
//    "options": {"buckets": [..], "modes": [..], "window_s", "settle_s", "slow_clock"},
//    "scenarios": [{"group", "name", "mode", "buckets", "vbuckets_per_bucket",
//                   "visitor_clock", "timeout_task_interval_ms", "window_s",
//                   "process_cpu_ticks", "process_cpu_percent", "resolution_percent",
//                   "process_runtime_ns", "process_runtime_percent",   (null without schedstat)
//                   "threads": [{"tid", "name", "cpu_ticks", "cpu_percent", "runtime_ns"}, ...],
//                   "timeout_task_runs", "timeout_task_runs_per_s", "stats_window_s",
//                   "timeout_tasks", "executor_nonio_threads"}, ...],
//    "comparisons": {"polling_vs_event_driven": Comparison | null,
//                    "slow_clock_syscall_vs_coarse": Comparison | null},
//    "targets": {"event_driven_idle": {"buckets", "max_percent", "process_cpu_percent",
//                                      "timeout_task_runs_per_s", "met"} | null}}
// Comparison: {"buckets", "numerator", "denominator", "numerator_percent",
//              "denominator_percent", "ratio", "ratio_at_least", "runtime_ratio"}.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/idle_cpu/cpu_usage.h"
#include "bench/idle_cpu/machine.h"
#include "bench/idle_cpu/options.h"
#include "bench/idle_cpu/scenario.h"
#include "bench/idle_cpu/task_stats.h"

namespace syncwrite::bench {

struct ScenarioResult {
  Scenario scenario;
  double window_s = 0;  // wall time between the two CPU samples
  long clk_tck = 100;
  CpuUsage cpu;
  uint64_t timeout_task_runs = 0;  // between the two stats reads
  double stats_window_s = 0;       // wall time between the two stats reads
  double timeout_task_runs_per_s = 0;
  uint64_t timeout_tasks = 0;
  uint64_t executor_nonio_threads = 0;

  // One clock tick as a percentage of a core over the window: the smallest
  // non-zero figure this window can show.
  double ResolutionPercent() const;
};

// numerator_percent / denominator_percent for two scenarios with the same
// bucket count. When the denominator measured zero ticks the ratio is
// unknown (null) and ratio_at_least bounds it with one tick of resolution.
// runtime_ratio is the same ratio from the schedstat runtimes (nanoseconds),
// when both have one and the denominator's is not zero.
struct Comparison {
  unsigned buckets = 0;
  std::string numerator, denominator;  // scenario names
  double numerator_percent = 0, denominator_percent = 0;
  std::optional<double> ratio;
  double ratio_at_least = 0;
  std::optional<double> runtime_ratio;
};

// Polling over event-driven at the largest bucket count measured in both
// modes; nullopt when there is none.
std::optional<Comparison> PollingVsEventDriven(const std::vector<ScenarioResult>& results);
// The slow-clock pair, syscall over coarse; nullopt when it was not run.
std::optional<Comparison> SlowClockComparison(const std::vector<ScenarioResult>& results);

// Issue 7's target for the event-driven mode at the largest bucket count
// measured: the whole process ≤ 0.5% of one core and no timeout-task run.
struct IdleTarget {
  unsigned buckets = 0;
  double max_percent = 0.5;
  double process_percent = 0;
  double timeout_task_runs_per_s = 0;
  bool met = false;
};
// nullopt when no event-driven scenario of the "idle" group was run.
std::optional<IdleTarget> EventDrivenIdleTarget(const std::vector<ScenarioResult>& results);

// The table for one scenario: process %, the `top` busiest threads, task runs.
std::string FormatScenario(const ScenarioResult& result, unsigned top);
// One line per scenario, then the comparisons.
std::string FormatSummary(const std::vector<ScenarioResult>& results);

// The whole JSON document (shape above).
nlohmann::json ResultsJson(const MachineInfo& machine, const Options& options,
                           const std::vector<ScenarioResult>& results);

}  // namespace syncwrite::bench
