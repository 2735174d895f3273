// idle_cpu: what syncwrite-server costs while it holds empty buckets.
//
// For each scenario (see scenario.h) the harness writes the server's config
// into a fresh temporary directory, starts the server, waits for its port
// file, lets it settle, then measures over the window: the process's and each
// thread's CPU ticks from /proc, and the timeout-task runs from the server's
// STAT "tasks". It stops the server with SIGTERM (an unclean exit fails the
// run), prints a table per scenario and a summary, and writes the JSON.
//
// Exit status: 0 measured, 1 a scenario failed (the message names it, the
// server's log is kept and its path printed), 2 bad command line.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include "bench/idle_cpu/cpu_usage.h"
#include "bench/idle_cpu/machine.h"
#include "bench/idle_cpu/options.h"
#include "bench/idle_cpu/report.h"
#include "bench/idle_cpu/scenario.h"
#include "bench/idle_cpu/server_process.h"
#include "bench/idle_cpu/task_stats_reader.h"

namespace syncwrite::bench {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double SecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

absl::Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// The server's mode per bucket must be the scenario's: a server that ignored
// the config would otherwise be measured under the wrong name.
absl::Status CheckServerRunsTheScenario(const Scenario& s, const TaskStats& stats) {
  if (stats.buckets.size() != s.buckets) {
    return absl::FailedPreconditionError(absl::StrCat(
        "server reports ", stats.buckets.size(), " buckets in STAT tasks, expected ", s.buckets));
  }
  for (const auto& [name, bucket] : stats.buckets) {
    if (bucket.timeout_mode != s.mode) {
      return absl::FailedPreconditionError(absl::StrCat("bucket ", name, " runs timeout mode \"",
                                                        bucket.timeout_mode, "\", expected \"",
                                                        s.mode, "\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ScenarioResult> RunScenario(const Scenario& s, const Options& o,
                                           const fs::path& server, const fs::path& dir,
                                           long clk_tck) {
  fs::create_directories(dir);
  const fs::path config = dir / "config.json";
  if (absl::Status st = WriteFile(config, ServerConfigFor(s).dump(2) + "\n"); !st.ok()) return st;
  const auto guard = Millis(o.start_timeout_s);
  absl::StatusOr<std::unique_ptr<ServerProcess>> proc =
      ServerProcess::Start(server, config, dir / "port", dir / "server.log", guard);
  if (!proc.ok()) return proc.status();
  ServerProcess& p = **proc;

  ScenarioResult r;
  r.scenario = s;
  r.clk_tck = clk_tck;
  {
    absl::StatusOr<TaskStatsReader> reader = TaskStatsReader::Connect(p.port(), guard);
    if (!reader.ok()) return reader.status();
    // Settling lets start-up work (vbucket creation, first task runs) end
    // before the window opens.
    std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_s));

    // The stats round trips bracket the CPU samples so their own cost stays
    // outside the CPU window.
    absl::StatusOr<TaskStats> stats_before = reader->Read();
    if (!stats_before.ok()) return stats_before.status();
    const auto stats_t0 = Clock::now();
    absl::StatusOr<CpuSample> before = TakeCpuSample(p.pid());
    if (!before.ok()) return before.status();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
    absl::StatusOr<CpuSample> after = TakeCpuSample(p.pid());
    const auto t1 = Clock::now();
    if (!after.ok()) return after.status();
    absl::StatusOr<TaskStats> stats_after = reader->Read();
    const auto stats_t1 = Clock::now();
    if (!stats_after.ok()) return stats_after.status();
    if (absl::Status st = CheckServerRunsTheScenario(s, *stats_after); !st.ok()) return st;

    r.window_s = SecondsBetween(t0, t1);
    r.cpu = ComputeUsage(*before, *after, clk_tck, r.window_s);
    r.stats_window_s = SecondsBetween(stats_t0, stats_t1);
    r.timeout_task_runs =
        stats_after->timeout_task_runs_total >= stats_before->timeout_task_runs_total
            ? stats_after->timeout_task_runs_total - stats_before->timeout_task_runs_total
            : 0;
    r.timeout_task_runs_per_s = TimeoutRunsPerSecond(*stats_before, *stats_after, r.stats_window_s);
    r.timeout_tasks = stats_after->timeout_tasks_total;
    r.executor_nonio_threads = stats_after->executor_nonio_threads;
  }  // the connection closes before the server is stopped
  if (absl::Status st = p.Stop(guard); !st.ok()) return st;
  return r;
}

fs::path DefaultServerPath() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return (ec ? fs::path(".") : self.parent_path()) / "syncwrite-server";
}

int Main(int argc, char** argv) {
  absl::StatusOr<Options> options = ParseOptions(argc, argv);
  if (!options.ok()) {
    std::cerr << "idle_cpu: " << options.status().message() << "\n" << Usage();
    return 2;
  }
  if (options->help) {
    std::cout << Usage();
    return 0;
  }
  const Options& o = *options;
  const fs::path server = o.server_path.empty() ? DefaultServerPath() : fs::path(o.server_path);
  if (access(server.c_str(), X_OK) != 0) {
    std::cerr << "idle_cpu: no executable server at " << server
              << " (build syncwrite-server, or pass --server PATH)\n";
    return 2;
  }
  const MachineInfo machine = ReadMachineInfo();

  std::string tmpl = (fs::temp_directory_path() / "idle_cpu.XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("idle_cpu: mkdtemp");
    return 1;
  }
  const fs::path work(tmpl);

  std::printf(
      "idle_cpu: %s, %u cores, %s, clock source %s, %ld ticks/s; window %.1f s, settle "
      "%.1f s\n\n",
      machine.cpu_model.c_str(), machine.cores, machine.kernel.c_str(),
      machine.clock_source.c_str(), machine.clk_tck, o.window_s, o.settle_s);
  std::fflush(stdout);
  std::vector<ScenarioResult> results;
  const std::vector<Scenario> scenarios = ScenariosFor(o);
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const fs::path dir = work / absl::StrCat("s", i);
    absl::StatusOr<ScenarioResult> r = RunScenario(scenarios[i], o, server, dir, machine.clk_tck);
    if (!r.ok()) {
      std::cerr << "idle_cpu: scenario \"" << scenarios[i].Name() << "\" failed: " << r.status()
                << "\n(its config and server log are kept in " << dir << ")\n";
      return 1;
    }
    std::printf("%s\n", FormatScenario(*r, o.top_threads).c_str());
    std::fflush(stdout);
    results.push_back(std::move(*r));
  }
  std::printf("%s", FormatSummary(results).c_str());

  const fs::path json_path(o.json_path);
  if (json_path.has_parent_path()) fs::create_directories(json_path.parent_path());
  const fs::path tmp = json_path.string() + ".tmp";
  if (absl::Status st = WriteFile(tmp, ResultsJson(machine, o, results).dump(2) + "\n"); !st.ok()) {
    std::cerr << "idle_cpu: " << st.message() << "\n";
    return 1;
  }
  fs::rename(tmp, json_path);
  std::printf("idle_cpu: wrote %s\n", json_path.c_str());
  fs::remove_all(work);
  return 0;
}

}  // namespace
}  // namespace syncwrite::bench

int main(int argc, char** argv) { return syncwrite::bench::Main(argc, argv); }
