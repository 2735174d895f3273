// Drive: a steady stream of durable SETs against a server whose replica never
// acknowledges, each answered SyncWriteAmbiguous at (never before) its
// timeout; records how late each answer was.
//
// `connections` clients (Client::connectToBucket, so whatever the server asks
// at bootstrap is answered by the shared client), each with at most one write
// in flight: the server answers a connection's requests in order, and a short
// write queued behind a long one on the same connection would measure the
// connection, not the timeout. A pacer sends a write every 1/rate s on an idle
// connection (counted as not_sent when none is idle: raise connections), with
// a timeout drawn uniformly from [min_timeout, max_timeout], a fresh key and
// vbucket (sequence number modulo vbuckets). One thread waits on every
// connection with epoll and reads answers as they arrive.
//
// behind_head: first, one write with timeout 30 s (never answered during the
// run) heads every vbucket, so that every measured write waits behind an older
// write with a later deadline (issue 16: answered at its own deadline).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

namespace syncwrite::bench {

struct DriveOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string bucket = "default";
  unsigned connections = 1200;
  double rate_per_s = 500;
  std::chrono::milliseconds duration{3000};  // of sending; answers are awaited after
  uint16_t min_timeout_ms = 50;
  uint16_t max_timeout_ms = 2000;
  uint16_t vbuckets = 64;
  bool behind_head = false;
  uint32_t seed = 16;
};

struct DriveResult {
  std::vector<int64_t> lateness_ns;  // one per ambiguous answer
  uint64_t sent = 0;
  uint64_t not_sent = 0;    // pacer ticks that found no idle connection
  uint64_t unexpected = 0;  // answers other than SyncWriteAmbiguous
  uint64_t unanswered = 0;  // sent, no answer by the hang guard
};

absl::StatusOr<DriveResult> Drive(const DriveOptions& options);

}  // namespace syncwrite::bench
