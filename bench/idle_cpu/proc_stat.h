// Reading a process's CPU time from /proc.
//
// /proc/PID/stat (and /proc/PID/task/TID/stat for one thread) is one line:
// "pid (comm) state ppid ... utime stime ...". comm is the task's name, up to
// 15 bytes for a thread but, for a process, whatever the program chose: it may
// hold spaces and parentheses, so the fields after it are found after the LAST
// ')' of the line, never by splitting on spaces from the start.
// utime and stime are in clock ticks (sysconf(_SC_CLK_TCK) per second); for a
// process they include every thread's time, those that have exited too.
//
// /proc/PID/task/TID/schedstat starts with the thread's time on a CPU in
// nanoseconds (sum_exec_runtime): the same time as utime + stime, measured at
// every context switch instead of sampled at every tick, so it resolves what a
// tick cannot (a thread that ran 3 ms in 10 s). It exists when the kernel has
// CONFIG_SCHED_INFO; without it the harness reports ticks only.
//
// Every function takes the /proc root as a parameter so tests can point it at
// a directory tree of their own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

namespace syncwrite::bench {

// The fields of one stat line the harness uses.
struct ProcStat {
  int pid = 0;
  std::string comm;  // between the first '(' and the last ')'
  char state = '?';
  uint64_t utime = 0;  // clock ticks in user mode
  uint64_t stime = 0;  // clock ticks in kernel mode
  uint64_t num_threads = 0;

  uint64_t ticks() const { return utime + stime; }
};

// Parses the text of a stat file. InvalidArgument, quoting the text, when it
// has no "(comm)", a non-numeric pid, or fewer fields after the comm than the
// kernel has written since Linux 2.6.
absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);

// One live thread of a process.
struct ThreadStat {
  int tid = 0;
  std::string name;    // /proc/PID/task/TID/comm without its newline
  uint64_t ticks = 0;  // utime + stime
  // Nanoseconds on a CPU from schedstat; nullopt when the file is missing.
  std::optional<uint64_t> runtime_ns;
};

// The first field of a schedstat line ("123456789 4567 89\n"): nanoseconds
// on a CPU. InvalidArgument quoting the text when it is not a number.
absl::StatusOr<uint64_t> ParseSchedstatRuntime(std::string_view text);

// <proc_root>/<pid>/stat, parsed. NotFound when the process does not exist.
absl::StatusOr<ProcStat> ReadProcStat(int pid, const std::filesystem::path& proc_root = "/proc");

// Every thread listed in <proc_root>/<pid>/task, sorted by tid, with its name,
// ticks and (where the kernel has it) schedstat runtime. A thread that exits between the listing
// and the read of its files is left out (that race is normal, not an error). NotFound when the
// process does not exist; InvalidArgument when a thread's stat is malformed.
// Cost: four small file reads per thread.
absl::StatusOr<std::vector<ThreadStat>> ListThreads(
    int pid, const std::filesystem::path& proc_root = "/proc");

}  // namespace syncwrite::bench
