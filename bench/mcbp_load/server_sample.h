// ServerSample: what /proc says about the server process at one instant —
// resident memory, threads, open descriptors and CPU time used so far — for
// mcbp_load's interval lines and its CPU-per-op figure.
//
// Reads /proc/PID/status (VmRSS, Threads), /proc/PID/stat (utime + stime,
// through bench/idle_cpu/proc_stat.h) and lists /proc/PID/fd (which needs the
// permission to read the process's descriptors: the same user, or root).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>

#include <absl/status/statusor.h>

namespace syncwrite::bench::mcbp_load {

struct ServerSample {
  std::chrono::steady_clock::time_point taken_at{};
  uint64_t rss_kb = 0;    // VmRSS
  uint64_t threads = 0;   // Threads
  uint64_t open_fds = 0;  // entries of /proc/PID/fd
  // Of open_fds, the files of a couchbase bucket's RocksDB (a path with a
  // "/rocksdb/" directory): RocksDB keeps its SST files open, as many as
  // compaction leaves, so their count follows the data, not a leak.
  uint64_t store_fds = 0;
  uint64_t cpu_ticks = 0;  // utime + stime, in sysconf(_SC_CLK_TCK) ticks
};

// NotFound when the process does not exist; InvalidArgument when a file does
// not hold what the kernel writes; PermissionDenied naming the directory when
// /proc/PID/fd cannot be listed. Cost: two small file reads and one directory
// listing.
absl::StatusOr<ServerSample> sampleServer(int pid,
                                          const std::filesystem::path& proc_root = "/proc");

// The CPU `from` -> `to` used, in percent of one core (0 when no time passed).
double cpuPercent(const ServerSample& from, const ServerSample& to);

// CPU seconds of a tick count.
double ticksToSeconds(uint64_t ticks);

}  // namespace syncwrite::bench::mcbp_load
