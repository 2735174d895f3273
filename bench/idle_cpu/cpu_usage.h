// CPU usage of a process over a window, from two samples of its tick counters.
//
// A sample is the process's utime + stime and every live thread's, read from
// /proc at one instant. The usage between two samples is expressed as a
// percentage of ONE core (so a process keeping two cores busy shows 200%):
//   percent = delta ticks / ticks_per_second / window_seconds * 100.
// With the usual 100 ticks per second the resolution is 1 tick, that is
// 0.1% of a core over a 10 s window and 1% over 1 s.
//
// Beside the ticks, the usage carries the schedstat runtime (nanoseconds; see
// proc_stat.h) summed over the threads: the precise figure, used to tell
// "0 ticks" apart from nothing at all. It covers live threads only (an idle
// server starts and ends none in the window), and is absent when any thread
// lacks a schedstat.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

#include "bench/idle_cpu/proc_stat.h"

namespace syncwrite::bench {

struct CpuSample {
  uint64_t process_ticks = 0;       // utime + stime of the whole process
  std::vector<ThreadStat> threads;  // live threads, sorted by tid
};

// Reads the process's stat, then its threads. NotFound when the process is
// gone. Cost: 1 + 3 × threads small reads of /proc.
absl::StatusOr<CpuSample> TakeCpuSample(int pid, const std::filesystem::path& proc_root = "/proc");

// Percent of one core for `ticks` clock ticks spent over `window_seconds`.
// Requires ticks_per_second > 0 and window_seconds > 0 (else returns 0).
double CpuPercent(uint64_t ticks, long ticks_per_second, double window_seconds);
// The same for nanoseconds on a CPU (ticks_per_second = 1e9).
double RuntimePercent(uint64_t runtime_ns, double window_seconds);

struct ThreadUsage {
  int tid = 0;
  std::string name;
  uint64_t ticks = 0;                  // spent within the window
  double percent = 0;                  // of one core
  std::optional<uint64_t> runtime_ns;  // schedstat, within the window
};

struct CpuUsage {
  uint64_t process_ticks = 0;
  double process_percent = 0;
  // Sum of the threads' schedstat runtime in the window, and it as % of one
  // core; nullopt when some thread has no schedstat.
  std::optional<uint64_t> runtime_ns;
  std::optional<double> runtime_percent;
  // Threads alive at the end of the window, busiest first (ties: by name,
  // then tid). A thread born during the window counts all its ticks; one that
  // exited during it is missing here but its ticks are in the process total.
  std::vector<ThreadUsage> threads;
};

// The usage between `before` and `after`, taken `window_seconds` apart from
// the same process. A counter that went backwards (not expected: the kernel
// keeps them monotonic) counts as zero rather than wrapping.
CpuUsage ComputeUsage(const CpuSample& before, const CpuSample& after, long ticks_per_second,
                      double window_seconds);

}  // namespace syncwrite::bench
