// timeout_precision: how close to its timeout syncwrite-server answers a
// SyncWrite that cannot commit (issue 16), in each timeout mode.
//
// For each mode (and, with --behind_head, each of the two scenarios: writes at
// the head of their vbucket, and writes queued behind a 30 s head) it starts
// the real server with a silent replica (listed, not simulated: nothing ever
// acknowledges), drives it with Drive() (driver.h) for --duration_s, stops it,
// and reports the early answers and the lateness min/p50/p99/p99.9/max, with
// the machine, the coarse clock's resolution and the polling interval, and the
// server's CPU over the drive (utime + stime of /proc/PID/stat, % of one core:
// the sending window and the wait for the last answers, so --duration_s well
// above the longest timeout measures the steady state). Text on stdout; JSON
// with --json.
//
// Exit status: 0 measured (early answers are reported, not fatal), 1 a run
// failed, 2 bad command line.
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <absl/flags/flag.h>
#include <absl/flags/parse.h>
#include <absl/flags/usage.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <absl/strings/str_split.h>
#include <nlohmann/json.hpp>

#include "bench/idle_cpu/machine.h"
#include "bench/idle_cpu/proc_stat.h"
#include "bench/idle_cpu/server_process.h"
#include "bench/timeout_precision/driver.h"
#include "bench/timeout_precision/lateness.h"
#include "clock/coarse_clock.h"

ABSL_FLAG(std::string, server, "", "syncwrite-server binary (default: beside this program)");
ABSL_FLAG(std::string, modes, "event-driven,polling", "timeout modes to measure, comma-separated");
ABSL_FLAG(double, rate, 500, "durable writes sent per second");
ABSL_FLAG(uint32_t, connections, 1200, "client connections (writes in flight at most)");
ABSL_FLAG(double, duration_s, 3, "seconds of sending per run (answers are awaited after)");
ABSL_FLAG(uint32_t, min_timeout_ms, 50, "shortest durability timeout asked for");
ABSL_FLAG(uint32_t, max_timeout_ms, 2000, "longest durability timeout asked for");
ABSL_FLAG(uint32_t, interval_ms, 25, "durability_timeout_task_interval (polling mode)");
ABSL_FLAG(uint32_t, vbuckets, 64, "max_vbuckets of the bucket");
ABSL_FLAG(bool, behind_head, true, "also run every write behind a 30 s head write");
ABSL_FLAG(std::string, json, "", "write the results as JSON to this file");

namespace syncwrite::bench {
namespace {

namespace fs = std::filesystem;

nlohmann::json ServerConfig(const std::string& mode) {
  return {{"max_connections", absl::GetFlag(FLAGS_connections) + 16},
          {"buckets",
           {{"default",
             {{"max_vbuckets", absl::GetFlag(FLAGS_vbuckets)},
              {"durability_timeout_mode", mode},
              {"durability_timeout_task_interval", absl::GetFlag(FLAGS_interval_ms)},
              {"replicas", {"replica1"}}}}}}};
}

struct RunResult {
  DriveResult drive;
  double server_cpu_pct = 0;  // of one core, over the drive
  // This program's own CPU over the drive, of one core: a driver that spun
  // beside the server (as it did, a whole core, before it slept to the
  // nanosecond) would take the cores the server's figure depends on.
  double driver_cpu_pct = 0;
};

absl::StatusOr<RunResult> RunOne(const fs::path& server, const std::string& mode, bool behind_head,
                                 const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path config = dir / "config.json";
  std::ofstream(config) << ServerConfig(mode).dump(2) << "\n";
  fs::remove(dir / "port");
  auto proc = ServerProcess::Start(server, config, dir / "port", dir / "server.log",
                                   std::chrono::seconds(30));
  if (!proc.ok()) return proc.status();
  DriveOptions o;
  o.port = (*proc)->port();
  o.connections = absl::GetFlag(FLAGS_connections);
  o.rate_per_s = absl::GetFlag(FLAGS_rate);
  o.duration =
      std::chrono::milliseconds(static_cast<int64_t>(absl::GetFlag(FLAGS_duration_s) * 1000));
  o.min_timeout_ms = static_cast<uint16_t>(absl::GetFlag(FLAGS_min_timeout_ms));
  o.max_timeout_ms = static_cast<uint16_t>(absl::GetFlag(FLAGS_max_timeout_ms));
  o.vbuckets = static_cast<uint16_t>(absl::GetFlag(FLAGS_vbuckets));
  o.behind_head = behind_head;
  // The driver's CPU is read as the server's is, from /proc.
  const absl::StatusOr<ProcStat> cpu_before = ReadProcStat((*proc)->pid());
  const absl::StatusOr<ProcStat> self_before = ReadProcStat(::getpid());
  const auto wall_before = std::chrono::steady_clock::now();
  absl::StatusOr<DriveResult> result = Drive(o);
  const auto wall = std::chrono::steady_clock::now() - wall_before;
  const absl::StatusOr<ProcStat> self_after = ReadProcStat(::getpid());
  const absl::StatusOr<ProcStat> cpu_after = ReadProcStat((*proc)->pid());
  absl::Status stopped = (*proc)->Stop(std::chrono::seconds(30));
  if (!result.ok()) return result.status();
  if (!stopped.ok()) return stopped;
  if (!cpu_before.ok()) return cpu_before.status();
  if (!cpu_after.ok()) return cpu_after.status();
  if (!self_before.ok()) return self_before.status();
  if (!self_after.ok()) return self_after.status();
  RunResult run{std::move(*result)};
  const double wall_s = std::chrono::duration<double>(wall).count();
  // % of one core: clock ticks over the drive against its wall time.
  const auto pct_of_core = [&](const ProcStat& before, const ProcStat& after) {
    return 100.0 * static_cast<double>(after.ticks() - before.ticks()) /
           static_cast<double>(::sysconf(_SC_CLK_TCK)) / wall_s;
  };
  run.server_cpu_pct = pct_of_core(*cpu_before, *cpu_after);
  run.driver_cpu_pct = pct_of_core(*self_before, *self_after);
  return run;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "timeout_precision: early answers and lateness of SyncWrite timeouts against the real "
      "syncwrite-server, per timeout mode");
  absl::ParseCommandLine(argc, argv);
  fs::path server = absl::GetFlag(FLAGS_server);
  if (server.empty()) server = fs::canonical("/proc/self/exe").parent_path() / "syncwrite-server";
  if (absl::GetFlag(FLAGS_min_timeout_ms) < 1 || absl::GetFlag(FLAGS_max_timeout_ms) > 65534 ||
      absl::GetFlag(FLAGS_min_timeout_ms) > absl::GetFlag(FLAGS_max_timeout_ms)) {
    std::cerr << "timeout_precision: timeouts must satisfy 1 <= min <= max <= 65534\n";
    return 2;
  }
  const MachineInfo machine = ReadMachineInfo();
  const auto resolution_us =
      std::chrono::duration<double, std::micro>(clock::CoarseClock::resolution()).count();
  nlohmann::json out = {
      {"machine",
       {{"cpu_model", machine.cpu_model},
        {"cores", machine.cores},
        {"kernel", machine.kernel},
        {"clock_source", machine.clock_source}}},
      {"coarse_resolution_us", resolution_us},
      {"polling_interval_ms", absl::GetFlag(FLAGS_interval_ms)},
      {"rate_per_s", absl::GetFlag(FLAGS_rate)},
      {"connections", absl::GetFlag(FLAGS_connections)},
      {"duration_s", absl::GetFlag(FLAGS_duration_s)},
      {"timeout_ms", {absl::GetFlag(FLAGS_min_timeout_ms), absl::GetFlag(FLAGS_max_timeout_ms)}},
      {"runs", nlohmann::json::array()}};
  std::cout << "machine: " << machine.cpu_model << ", " << machine.cores << " cores, "
            << machine.kernel << ", clock source " << machine.clock_source << "\n"
            << "coarse clock resolution " << resolution_us / 1000 << " ms, polling interval "
            << absl::GetFlag(FLAGS_interval_ms) << " ms; " << absl::GetFlag(FLAGS_rate)
            << " writes/s for " << absl::GetFlag(FLAGS_duration_s) << " s on "
            << absl::GetFlag(FLAGS_connections) << " connections, timeouts "
            << absl::GetFlag(FLAGS_min_timeout_ms) << ".." << absl::GetFlag(FLAGS_max_timeout_ms)
            << " ms; lateness = answer - send - timeout, as the client sees it\n\n"
            << absl::StrCat("mode          scenario     ", "sent  not_sent  cpu%  ",
                            LatenessHeader())
            << "\n";
  char dir_template[] = "/tmp/timeout_precision-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) return 1;
  int exit_code = 0;
  const std::vector<std::string> modes = absl::StrSplit(absl::GetFlag(FLAGS_modes), ',');
  for (const std::string& mode : modes) {
    for (bool behind : {false, true}) {
      if (behind && !absl::GetFlag(FLAGS_behind_head)) continue;
      const std::string scenario = behind ? "behind-head" : "head";
      absl::StatusOr<RunResult> run_result =
          RunOne(server, mode, behind, fs::path(dir) / absl::StrCat(mode, "-", scenario));
      if (!run_result.ok()) {
        std::cerr << "timeout_precision: " << mode << " " << scenario << ": " << run_result.status()
                  << " (server log in " << dir << ")\n";
        exit_code = 1;
        continue;
      }
      const DriveResult* r = &run_result->drive;
      const LatenessSummary s = Summarize(r->lateness_ns);
      std::cout << absl::StrFormat("%-13s %-12s %5d %9d %5.1f  ", mode, scenario, r->sent,
                                   r->not_sent, run_result->server_cpu_pct)
                << LatenessRow(s);
      if (r->unexpected + r->unanswered > 0) {
        std::cout << "  (" << r->unexpected << " unexpected answers, " << r->unanswered
                  << " unanswered)";
      }
      std::cout << "\n";
      nlohmann::json run = ToJson(s);
      run["mode"] = mode;
      run["scenario"] = scenario;
      run["sent"] = r->sent;
      run["not_sent"] = r->not_sent;
      run["unexpected"] = r->unexpected;
      run["unanswered"] = r->unanswered;
      run["server_cpu_pct"] = run_result->server_cpu_pct;
      run["driver_cpu_pct"] = run_result->driver_cpu_pct;
      out["runs"].push_back(run);
    }
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << out.dump(2) << "\n";
  }
  if (exit_code == 0) fs::remove_all(dir);
  return exit_code;
}

}  // namespace
}  // namespace syncwrite::bench

int main(int argc, char** argv) {
  try {
    return syncwrite::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "timeout_precision: " << e.what() << "\n";
    return 1;
  }
}
