// The results of one mcbp_load run and their two renderings: text for people
// (one line per interval, a summary at the end) and JSON (--json) with the
// same figures plus the options and the interval series.
//
// Latencies are recorded in nanoseconds and reported in microseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/mcbp_load/connection.h"
#include "bench/mcbp_load/histogram.h"
#include "bench/mcbp_load/options.h"
#include "bench/mcbp_load/status_counts.h"

namespace syncwrite::bench::mcbp_load {

// The server as /proc saw it at the end of an interval (server_sample.h).
struct ServerFigures {
  uint64_t rss_kb = 0;
  uint64_t threads = 0;
  uint64_t open_fds = 0;
  double cpu_percent = 0;  // of one core, over the interval
};

// One --report-interval line.
struct Interval {
  double end_s = 0;                     // since the start of the timed run
  double seconds = 0;                   // its length
  uint64_t ops = 0;                     // responses in it
  double ops_per_s = 0;                 // ops / seconds
  std::optional<ServerFigures> server;  // with --server-pid, when /proc could be read
};

struct LoadResult {
  LoadOptions options;
  double preload_s = 0;  // 0 without --preload
  StatusCounts preload_statuses;
  double elapsed_s = 0;  // from the start of the timed run to the last answer
  uint64_t ops = 0;
  LatencyHistogram latency;       // nanoseconds
  std::vector<SlowRequest> slow;  // --slow-log-us: every connection's, by answer time
  StatusCounts statuses;
  std::vector<Interval> intervals;
  // utime + stime the server used over the timed run (--server-pid).
  std::optional<double> server_cpu_s;
  // Connections that failed during the timed run (their figures up to the
  // failure are included above).
  std::vector<std::string> errors;

  double opsPerSecond() const { return elapsed_s > 0 ? static_cast<double>(ops) / elapsed_s : 0; }
};

// "   2.0 s  123456 ops/s  rss 123456 kB  threads 12  fds 20  cpu 95.1%".
std::string formatInterval(const Interval& interval);

// The end-of-run summary, several lines, ending with a newline.
std::string formatSummary(const LoadResult& result);

// Everything: options, preload, totals, latency_us {p50, p99, p99_9, max},
// statuses {"0x00": n, ...}, server_cpu_us_per_op, intervals, errors, and
// with --slow-log-us slow_requests [{answered_unix_s, latency_us}, ...].
nlohmann::json toJson(const LoadResult& result);

}  // namespace syncwrite::bench::mcbp_load
