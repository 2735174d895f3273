// The server's task counters, from its STAT "tasks" group.
//
// syncwrite-server answers STAT "tasks" (no bucket selected) with, among
// others:
//   timeout_task_runs_total   runs of every durability timeout task so far
//   timeout_tasks_total       timeout tasks that exist now
//   executor_nonio_threads    threads in the executor's NonIO group
//   <bucket>:timeout_task_runs   the bucket's share of the runs
//   <bucket>:timeout_mode        polling | event-driven
// The counters are cumulative, so the harness reads them before and after its
// window and divides the difference by the time between the two reads.
// Keys it does not know are ignored: the group may grow.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <absl/status/statusor.h>

namespace syncwrite::bench {

struct BucketTaskStats {
  uint64_t timeout_task_runs = 0;
  std::string timeout_mode;
};

struct TaskStats {
  uint64_t timeout_task_runs_total = 0;
  uint64_t timeout_tasks_total = 0;
  uint64_t executor_nonio_threads = 0;
  std::map<std::string, BucketTaskStats> buckets;  // by bucket name
};

// Parses the key → value pairs of the group. InvalidArgument naming the key
// when one of the three totals is missing, or when a counter is not a
// non-negative decimal integer; a bucket key is split at its LAST ':'.
absl::StatusOr<TaskStats> ParseTaskStats(const std::map<std::string, std::string>& stats);

// Timeout-task runs per second between two reads `seconds` apart (0 when
// seconds is not positive or the counter went backwards, e.g. a restart).
double TimeoutRunsPerSecond(const TaskStats& before, const TaskStats& after, double seconds);

}  // namespace syncwrite::bench
