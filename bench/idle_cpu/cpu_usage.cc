#include "bench/idle_cpu/cpu_usage.h"

#include <algorithm>
#include <unordered_map>

namespace syncwrite::bench {
namespace {

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

}  // namespace

absl::StatusOr<CpuSample> TakeCpuSample(int pid, const std::filesystem::path& proc_root) {
  absl::StatusOr<ProcStat> process = ReadProcStat(pid, proc_root);
  if (!process.ok()) return process.status();
  absl::StatusOr<std::vector<ThreadStat>> threads = ListThreads(pid, proc_root);
  if (!threads.ok()) return threads.status();
  return CpuSample{process->ticks(), std::move(*threads)};
}

double CpuPercent(uint64_t ticks, long ticks_per_second, double window_seconds) {
  if (ticks_per_second <= 0 || !(window_seconds > 0)) return 0;
  return static_cast<double>(ticks) / static_cast<double>(ticks_per_second) / window_seconds *
         100.0;
}

double RuntimePercent(uint64_t runtime_ns, double window_seconds) {
  if (!(window_seconds > 0)) return 0;
  return static_cast<double>(runtime_ns) / 1e9 / window_seconds * 100.0;
}

CpuUsage ComputeUsage(const CpuSample& before, const CpuSample& after, long ticks_per_second,
                      double window_seconds) {
  CpuUsage usage;
  usage.process_ticks = Delta(before.process_ticks, after.process_ticks);
  usage.process_percent = CpuPercent(usage.process_ticks, ticks_per_second, window_seconds);

  std::unordered_map<int, const ThreadStat*> by_tid;
  for (const ThreadStat& t : before.threads) by_tid[t.tid] = &t;
  bool every_runtime = true;
  uint64_t runtime_sum = 0;
  for (const ThreadStat& t : after.threads) {
    const auto it = by_tid.find(t.tid);
    const ThreadStat* was = it == by_tid.end() ? nullptr : it->second;
    ThreadUsage u{t.tid, t.name, was ? Delta(was->ticks, t.ticks) : t.ticks, 0, std::nullopt};
    u.percent = CpuPercent(u.ticks, ticks_per_second, window_seconds);
    if (t.runtime_ns && (!was || was->runtime_ns)) {
      u.runtime_ns = was ? Delta(*was->runtime_ns, *t.runtime_ns) : *t.runtime_ns;
      runtime_sum += *u.runtime_ns;
    } else {
      every_runtime = false;
    }
    usage.threads.push_back(std::move(u));
  }
  if (every_runtime && !after.threads.empty()) {
    usage.runtime_ns = runtime_sum;
    usage.runtime_percent = RuntimePercent(runtime_sum, window_seconds);
  }
  std::sort(usage.threads.begin(), usage.threads.end(),
            [](const ThreadUsage& a, const ThreadUsage& b) {
              if (a.ticks != b.ticks) return a.ticks > b.ticks;
              if (a.name != b.name) return a.name < b.name;
              return a.tid < b.tid;
            });
  return usage;
}

}  // namespace syncwrite::bench
