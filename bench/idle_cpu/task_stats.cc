#include "bench/idle_cpu/task_stats.h"

#include <optional>

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include "server/parse_number.h"

namespace syncwrite::bench {
namespace {

absl::Status ParseCounter(const std::string& key, const std::string& value, uint64_t& out) {
  const std::optional<uint64_t> number = server::parseNumber<uint64_t>(value);
  if (!number) {
    return absl::InvalidArgumentError(
        absl::StrCat("stat \"", key, "\" = \"", value, "\": expected a non-negative integer"));
  }
  out = *number;
  return absl::OkStatus();
}

absl::Status ParseRequired(const std::map<std::string, std::string>& stats, const std::string& key,
                           uint64_t& out) {
  const auto it = stats.find(key);
  if (it == stats.end()) {
    return absl::InvalidArgumentError(absl::StrCat("STAT \"tasks\" has no \"", key, "\""));
  }
  return ParseCounter(key, it->second, out);
}

}  // namespace

absl::StatusOr<TaskStats> ParseTaskStats(const std::map<std::string, std::string>& stats) {
  TaskStats out;
  if (absl::Status s = ParseRequired(stats, "timeout_task_runs_total", out.timeout_task_runs_total);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseRequired(stats, "timeout_tasks_total", out.timeout_tasks_total);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseRequired(stats, "executor_nonio_threads", out.executor_nonio_threads);
      !s.ok()) {
    return s;
  }
  for (const auto& [key, value] : stats) {
    const size_t colon = key.rfind(':');
    if (colon == std::string::npos || colon == 0) continue;
    const std::string bucket = key.substr(0, colon);
    const std::string_view field = std::string_view(key).substr(colon + 1);
    if (field == "timeout_task_runs") {
      if (absl::Status s = ParseCounter(key, value, out.buckets[bucket].timeout_task_runs);
          !s.ok()) {
        return s;
      }
    } else if (field == "timeout_mode") {
      out.buckets[bucket].timeout_mode = value;
    }
  }
  return out;
}

double TimeoutRunsPerSecond(const TaskStats& before, const TaskStats& after, double seconds) {
  if (!(seconds > 0) || after.timeout_task_runs_total < before.timeout_task_runs_total) return 0;
  return static_cast<double>(after.timeout_task_runs_total - before.timeout_task_runs_total) /
         seconds;
}

}  // namespace syncwrite::bench
