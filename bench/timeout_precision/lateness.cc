#include "bench/timeout_precision/lateness.h"

#include <algorithm>
#include <cmath>

#include <absl/strings/str_format.h>

namespace syncwrite::bench {
namespace {

// The nearest-rank percentile p (0..100] of sorted, non-empty `v`.
int64_t Rank(const std::vector<int64_t>& v, double p) {
  const auto n = static_cast<double>(v.size());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * n));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace

LatenessSummary Summarize(std::vector<int64_t> samples_ns) {
  LatenessSummary s;
  s.count = samples_ns.size();
  if (samples_ns.empty()) return s;
  std::sort(samples_ns.begin(), samples_ns.end());
  s.early = static_cast<uint64_t>(
      std::lower_bound(samples_ns.begin(), samples_ns.end(), int64_t{0}) - samples_ns.begin());
  s.min_ns = samples_ns.front();
  s.p50_ns = Rank(samples_ns, 50);
  s.p99_ns = Rank(samples_ns, 99);
  s.p999_ns = Rank(samples_ns, 99.9);
  s.max_ns = samples_ns.back();
  return s;
}

nlohmann::json ToJson(const LatenessSummary& s) {
  return {{"count", s.count},       {"early", s.early},       {"min_ms", Ms(s.min_ns)},
          {"p50_ms", Ms(s.p50_ns)}, {"p99_ms", Ms(s.p99_ns)}, {"p99_9_ms", Ms(s.p999_ns)},
          {"max_ms", Ms(s.max_ns)}};
}

std::string LatenessHeader() {
  return absl::StrFormat("%8s %6s %9s %9s %9s %9s %9s", "answers", "early", "min ms", "p50 ms",
                         "p99 ms", "p99.9 ms", "max ms");
}

std::string LatenessRow(const LatenessSummary& s) {
  return absl::StrFormat("%8d %6d %9.3f %9.3f %9.3f %9.3f %9.3f", s.count, s.early, Ms(s.min_ns),
                         Ms(s.p50_ns), Ms(s.p99_ns), Ms(s.p999_ns), Ms(s.max_ns));
}

}  // namespace syncwrite::bench
