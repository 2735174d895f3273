// Lateness: how long after its timeout each SyncWrite's ambiguous answer
// arrived, summarised as bench/timeout_precision reports it.
//
// A sample is (answer received - request sent - timeout asked for), measured
// by the client with steady_clock. It is an upper bound on the server's own
// lateness (the request took some time to arrive); a negative sample is an
// answer that came before the timeout had elapsed even as the client counts
// it — "early", which the server must never be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace syncwrite::bench {

struct LatenessSummary {
  uint64_t count = 0;
  uint64_t early = 0;  // samples < 0
  // Nearest-rank percentiles, in nanoseconds; 0 when count is 0.
  int64_t min_ns = 0;
  int64_t p50_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t max_ns = 0;
};

// Sorts `samples_ns` (hence by value) and summarises them.
LatenessSummary Summarize(std::vector<int64_t> samples_ns);

// {"count", "early", "min_ms", "p50_ms", "p99_ms", "p99_9_ms", "max_ms"}.
nlohmann::json ToJson(const LatenessSummary& s);

// "count early min p50 p99 p99.9 max", ms with three decimals, column-aligned
// with LatenessHeader().
std::string LatenessHeader();
std::string LatenessRow(const LatenessSummary& s);

}  // namespace syncwrite::bench
