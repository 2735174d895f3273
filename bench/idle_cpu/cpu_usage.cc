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

CpuUsage ComputeUsage(const CpuSample& before, const CpuSample& after, long ticks_per_second,
                      double window_seconds) {
  CpuUsage usage;
  usage.process_ticks = Delta(before.process_ticks, after.process_ticks);
  usage.process_percent = CpuPercent(usage.process_ticks, ticks_per_second, window_seconds);

  std::unordered_map<int, uint64_t> ticks_before;
  for (const ThreadStat& t : before.threads) ticks_before[t.tid] = t.ticks;
  for (const ThreadStat& t : after.threads) {
    const auto it = ticks_before.find(t.tid);
    const uint64_t ticks = it == ticks_before.end() ? t.ticks : Delta(it->second, t.ticks);
    usage.threads.push_back(
        {t.tid, t.name, ticks, CpuPercent(ticks, ticks_per_second, window_seconds)});
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
