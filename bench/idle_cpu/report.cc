#include "bench/idle_cpu/report.h"

#include <algorithm>
#include <cstdio>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

namespace syncwrite::bench {
namespace {

std::optional<Comparison> Compare(const ScenarioResult& num, const ScenarioResult& den) {
  Comparison c;
  c.buckets = num.scenario.buckets;
  c.numerator = num.scenario.Name();
  c.denominator = den.scenario.Name();
  c.numerator_percent = num.cpu.process_percent;
  c.denominator_percent = den.cpu.process_percent;
  if (den.cpu.process_ticks > 0) {
    c.ratio = c.numerator_percent / c.denominator_percent;
    c.ratio_at_least = *c.ratio;
  } else {
    const double one_tick = den.ResolutionPercent();
    c.ratio_at_least = one_tick > 0 ? c.numerator_percent / one_tick : 0;
  }
  if (num.cpu.runtime_percent && den.cpu.runtime_percent && *den.cpu.runtime_ns > 0) {
    c.runtime_ratio = *num.cpu.runtime_percent / *den.cpu.runtime_percent;
  }
  return c;
}

const ScenarioResult* Find(const std::vector<ScenarioResult>& results, const std::string& group,
                           const std::string& mode, unsigned buckets,
                           const std::string& clock = "coarse") {
  for (const ScenarioResult& r : results) {
    const Scenario& s = r.scenario;
    if (s.group == group && s.mode == mode && s.buckets == buckets && s.visitor_clock == clock) {
      return &r;
    }
  }
  return nullptr;
}

std::string FormatRatio(const std::optional<Comparison>& c) {
  if (!c) return "n/a";
  std::string out;
  if (c->ratio) {
    out = absl::StrFormat("%.1fx", *c->ratio);
  } else if (c->numerator_percent == 0) {
    out = "n/a (both below one tick)";
  } else {
    out = absl::StrFormat(">= %.1fx (denominator below one tick)", c->ratio_at_least);
  }
  if (c->runtime_ratio)
    absl::StrAppend(&out, absl::StrFormat("; schedstat %.1fx", *c->runtime_ratio));
  return out;
}

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string FormatRuntime(const std::optional<double>& percent) {
  return percent ? absl::StrFormat("%.3f%%", *percent) : std::string("n/a");
}

nlohmann::json ComparisonJson(const std::optional<Comparison>& c) {
  if (!c) return nullptr;
  return {{"buckets", c->buckets},
          {"numerator", c->numerator},
          {"denominator", c->denominator},
          {"numerator_percent", c->numerator_percent},
          {"denominator_percent", c->denominator_percent},
          {"ratio", OrNull(c->ratio)},
          {"ratio_at_least", c->ratio_at_least},
          {"runtime_ratio", OrNull(c->runtime_ratio)}};
}

nlohmann::json TargetJson(const std::optional<IdleTarget>& t) {
  if (!t) return nullptr;
  return {{"buckets", t->buckets},
          {"max_percent", t->max_percent},
          {"process_cpu_percent", t->process_percent},
          {"timeout_task_runs_per_s", t->timeout_task_runs_per_s},
          {"met", t->met}};
}

}  // namespace

double ScenarioResult::ResolutionPercent() const { return CpuPercent(1, clk_tck, window_s); }

std::optional<Comparison> PollingVsEventDriven(const std::vector<ScenarioResult>& results) {
  const ScenarioResult* best_polling = nullptr;
  const ScenarioResult* best_event = nullptr;
  for (const ScenarioResult& r : results) {
    if (r.scenario.group != "idle" || r.scenario.mode != "polling") continue;
    const ScenarioResult* e = Find(results, "idle", "event-driven", r.scenario.buckets);
    if (e && (!best_polling || r.scenario.buckets > best_polling->scenario.buckets)) {
      best_polling = &r;
      best_event = e;
    }
  }
  if (!best_polling) return std::nullopt;
  return Compare(*best_polling, *best_event);
}

std::optional<Comparison> SlowClockComparison(const std::vector<ScenarioResult>& results) {
  for (const ScenarioResult& r : results) {
    if (r.scenario.group != "slow_clock" || r.scenario.visitor_clock != "syscall") continue;
    const ScenarioResult* coarse = Find(results, "slow_clock", "polling", r.scenario.buckets);
    if (coarse) return Compare(r, *coarse);
  }
  return std::nullopt;
}

std::optional<IdleTarget> EventDrivenIdleTarget(const std::vector<ScenarioResult>& results) {
  const ScenarioResult* largest = nullptr;
  for (const ScenarioResult& r : results) {
    if (r.scenario.group != "idle" || r.scenario.mode != "event-driven") continue;
    if (!largest || r.scenario.buckets > largest->scenario.buckets) largest = &r;
  }
  if (!largest) return std::nullopt;
  IdleTarget t;
  t.buckets = largest->scenario.buckets;
  t.process_percent = largest->cpu.process_percent;
  t.timeout_task_runs_per_s = largest->timeout_task_runs_per_s;
  t.met = t.process_percent <= t.max_percent && largest->timeout_task_runs == 0;
  return t;
}

std::string FormatScenario(const ScenarioResult& r, unsigned top) {
  const Scenario& s = r.scenario;
  std::string out = absl::StrFormat(
      "== %s  (%u vbuckets/bucket, interval %u ms, visitor clock %s; window %.2f s, 1 tick = "
      "%.2f%%)\n",
      s.Name(), s.vbuckets, s.interval_ms, s.visitor_clock, r.window_s, r.ResolutionPercent());
  absl::StrAppend(&out, absl::StrFormat("  %-24s %8.2f%% of one core  (%u ticks; schedstat %s)\n",
                                        "process", r.cpu.process_percent, r.cpu.process_ticks,
                                        FormatRuntime(r.cpu.runtime_percent)));
  const size_t shown = std::min<size_t>(top, r.cpu.threads.size());
  for (size_t i = 0; i < shown; ++i) {
    const ThreadUsage& t = r.cpu.threads[i];
    absl::StrAppend(&out,
                    absl::StrFormat("  %-24s %8.2f%%               (%u ticks)\n",
                                    absl::StrCat(t.name, " [", t.tid, "]"), t.percent, t.ticks));
  }
  if (r.cpu.threads.size() > shown) {
    absl::StrAppend(&out, absl::StrFormat("  (%u more threads)\n", r.cpu.threads.size() - shown));
  }
  absl::StrAppend(
      &out, absl::StrFormat("  %-24s %8.1f/s  (%u runs in %.2f s; %u timeout tasks, %u NonIO "
                            "threads)\n",
                            "timeout task runs", r.timeout_task_runs_per_s, r.timeout_task_runs,
                            r.stats_window_s, r.timeout_tasks, r.executor_nonio_threads));
  return out;
}

std::string FormatSummary(const std::vector<ScenarioResult>& results) {
  std::string out = absl::StrFormat("%-40s %12s %12s %14s\n", "scenario", "process %",
                                    "schedstat %", "task runs/s");
  for (const ScenarioResult& r : results) {
    absl::StrAppend(
        &out,
        absl::StrFormat("%-40s %11.2f%% %12s %14.1f\n", r.scenario.Name(), r.cpu.process_percent,
                        FormatRuntime(r.cpu.runtime_percent), r.timeout_task_runs_per_s));
  }
  if (const auto c = PollingVsEventDriven(results)) {
    absl::StrAppend(
        &out, absl::StrFormat("polling / event-driven at B=%u: %s\n", c->buckets, FormatRatio(c)));
  }
  if (const auto c = SlowClockComparison(results)) {
    absl::StrAppend(&out, absl::StrFormat("slow clock, polling B=%u, syscall / coarse: %s\n",
                                          c->buckets, FormatRatio(c)));
  }
  if (const auto t = EventDrivenIdleTarget(results)) {
    absl::StrAppend(&out, absl::StrFormat("target event-driven B=%u: <= %.1f%% of one core and 0 "
                                          "timeout-task runs/s: %s (%.2f%%, %.1f/s)\n",
                                          t->buckets, t->max_percent, t->met ? "met" : "MISSED",
                                          t->process_percent, t->timeout_task_runs_per_s));
  }
  return out;
}

nlohmann::json ResultsJson(const MachineInfo& machine, const Options& options,
                           const std::vector<ScenarioResult>& results) {
  nlohmann::json scenarios = nlohmann::json::array();
  for (const ScenarioResult& r : results) {
    const Scenario& s = r.scenario;
    nlohmann::json threads = nlohmann::json::array();
    for (const ThreadUsage& t : r.cpu.threads) {
      threads.push_back({{"tid", t.tid},
                         {"name", t.name},
                         {"cpu_ticks", t.ticks},
                         {"cpu_percent", t.percent},
                         {"runtime_ns", OrNull(t.runtime_ns)}});
    }
    scenarios.push_back({{"group", s.group},
                         {"name", s.Name()},
                         {"mode", s.mode},
                         {"buckets", s.buckets},
                         {"vbuckets_per_bucket", s.vbuckets},
                         {"visitor_clock", s.visitor_clock},
                         {"timeout_task_interval_ms", s.interval_ms},
                         {"window_s", r.window_s},
                         {"process_cpu_ticks", r.cpu.process_ticks},
                         {"process_cpu_percent", r.cpu.process_percent},
                         {"resolution_percent", r.ResolutionPercent()},
                         {"process_runtime_ns", OrNull(r.cpu.runtime_ns)},
                         {"process_runtime_percent", OrNull(r.cpu.runtime_percent)},
                         {"threads", std::move(threads)},
                         {"timeout_task_runs", r.timeout_task_runs},
                         {"timeout_task_runs_per_s", r.timeout_task_runs_per_s},
                         {"stats_window_s", r.stats_window_s},
                         {"timeout_tasks", r.timeout_tasks},
                         {"executor_nonio_threads", r.executor_nonio_threads}});
  }
  return {{"harness", "idle_cpu"},
          {"format", 1},
          {"machine",
           {{"cores", machine.cores},
            {"cpu_model", machine.cpu_model},
            {"kernel", machine.kernel},
            {"clock_source", machine.clock_source},
            {"clk_tck", machine.clk_tck}}},
          {"options",
           {{"buckets", options.buckets},
            {"modes", options.modes},
            {"window_s", options.window_s},
            {"settle_s", options.settle_s},
            {"slow_clock", options.slow_clock}}},
          {"scenarios", std::move(scenarios)},
          {"comparisons",
           {{"polling_vs_event_driven", ComparisonJson(PollingVsEventDriven(results))},
            {"slow_clock_syscall_vs_coarse", ComparisonJson(SlowClockComparison(results))}}},
          {"targets", {{"event_driven_idle", TargetJson(EventDrivenIdleTarget(results))}}}};
}

}  // namespace syncwrite::bench
