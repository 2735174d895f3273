#include "bench/idle_cpu/task_stats_reader.h"

#include <map>
#include <string>

#include <absl/strings/str_cat.h>

#include "server/protocol/status.h"

namespace syncwrite::bench {

absl::StatusOr<TaskStatsReader> TaskStatsReader::Connect(uint16_t port,
                                                         std::chrono::milliseconds timeout) {
  // STAT "tasks" needs no bucket.
  absl::StatusOr<server::protocol::Client> client = server::protocol::Client::connectToBucket(
      "127.0.0.1", port, /*bucket=*/"", "idle_cpu", {.timeout = timeout});
  if (!client.ok()) return client.status();
  return TaskStatsReader(std::move(*client));
}

absl::StatusOr<TaskStats> TaskStatsReader::Read() {
  absl::StatusOr<server::protocol::StatsReply> reply = client_.stats("tasks");
  if (!reply.ok()) return reply.status();
  if (!reply->ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "STAT \"tasks\" answered ", std::string(server::protocol::toString(reply->status)), " ",
        reply->error_context));
  }
  std::map<std::string, std::string> stats(reply->stats.begin(), reply->stats.end());
  return ParseTaskStats(stats);
}

}  // namespace syncwrite::bench
