// TaskStatsReader: reads the server's STAT "tasks" group over one MCBP
// connection (the protocol layer's blocking client).
//
// The connection is opened once, right after the server listens, and kept
// idle during the window: an idle connection costs the server nothing, and
// reconnecting inside the window would charge the connect to the scenario.
#pragma once

#include <chrono>
#include <cstdint>

#include <absl/status/statusor.h>

#include "bench/idle_cpu/task_stats.h"
#include "server/protocol/client.h"

namespace syncwrite::bench {

class TaskStatsReader {
 public:
  // Connects to 127.0.0.1:port and says HELLO (Client::connectToBucket, no
  // bucket); every later call is bounded by `timeout`.
  static absl::StatusOr<TaskStatsReader> Connect(uint16_t port, std::chrono::milliseconds timeout);

  // One STAT "tasks" round trip, parsed. Transport errors as the client's;
  // an error answer is FailedPrecondition with its status; a malformed group
  // is ParseTaskStats's error.
  absl::StatusOr<TaskStats> Read();

 private:
  explicit TaskStatsReader(server::protocol::Client client) : client_(std::move(client)) {}
  server::protocol::Client client_;
};

}  // namespace syncwrite::bench
