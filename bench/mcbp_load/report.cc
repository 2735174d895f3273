#include "bench/mcbp_load/report.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "server/protocol/status.h"

namespace syncwrite::bench::mcbp_load {

namespace {

double micros(uint64_t ns) { return static_cast<double>(ns) / 1000; }

std::string hexStatus(uint16_t status) { return absl::StrFormat("0x%02x", status); }

std::string statusName(uint16_t status) {
  return std::string(server::protocol::toString(static_cast<server::protocol::Status>(status)));
}

std::string statusLines(const StatusCounts& counts) {
  std::string text;
  for (const auto& [status, n] : counts.nonZero()) {
    absl::StrAppend(&text, "    ", hexStatus(status), " ", statusName(status), ": ", n, "\n");
  }
  return text;
}

nlohmann::json statusJson(const StatusCounts& counts) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [status, n] : counts.nonZero()) json[hexStatus(status)] = n;
  return json;
}

std::optional<double> cpuPerOpMicros(const LoadResult& result) {
  if (!result.server_cpu_s || result.ops == 0) return std::nullopt;
  return *result.server_cpu_s * 1e6 / static_cast<double>(result.ops);
}

}  // namespace

std::string formatInterval(const Interval& interval) {
  std::string line = absl::StrFormat("%7.1f s  %10.0f ops/s", interval.end_s, interval.ops_per_s);
  if (interval.server) {
    absl::StrAppendFormat(&line, "  rss %d kB  threads %d  fds %d  cpu %.1f%%",
                          interval.server->rss_kb, interval.server->threads,
                          interval.server->open_fds, interval.server->cpu_percent);
  }
  return line;
}

std::string formatSummary(const LoadResult& result) {
  const LoadOptions& o = result.options;
  std::string text = absl::StrFormat(
      "mcbp_load: %s, %u connections x depth %u, %u keys, %u-byte %svalues, durability %s\n",
      toString(o.op), o.connections, o.depth, o.keys, o.value_size, o.value_json ? "JSON " : "",
      durability::toString(o.durability));
  if (o.preload) {
    absl::StrAppendFormat(&text, "  preload: %d keys in %.2f s\n", o.keys, result.preload_s);
    text += statusLines(result.preload_statuses);
  }
  absl::StrAppendFormat(&text, "  ops: %d in %.2f s = %.0f ops/s\n", result.ops, result.elapsed_s,
                        result.opsPerSecond());
  const LatencyHistogram& h = result.latency;
  absl::StrAppendFormat(&text, "  latency us: p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
                        micros(h.percentile(50)), micros(h.percentile(99)),
                        micros(h.percentile(99.9)), micros(h.max()));
  if (result.options.slow_log.count() > 0) {
    absl::StrAppendFormat(&text, "  slower than %d us: %d\n", result.options.slow_log.count(),
                          result.slow.size());
  }
  text += "  statuses:\n";
  text += statusLines(result.statuses);
  if (auto per_op = cpuPerOpMicros(result)) {
    absl::StrAppendFormat(&text, "  server cpu: %.2f s = %.2f us/op\n", *result.server_cpu_s,
                          *per_op);
  }
  for (const std::string& error : result.errors) absl::StrAppend(&text, "  error: ", error, "\n");
  return text;
}

nlohmann::json toJson(const LoadResult& result) {
  const LoadOptions& o = result.options;
  nlohmann::json options = {
      {"host", o.host},
      {"port", o.port},
      {"bucket", o.plain_memcached ? "" : o.bucket},
      {"plain_memcached", o.plain_memcached},
      {"connections", o.connections},
      {"threads", threadCount(o)},
      {"depth", o.depth},
      {"op", toString(o.op)},
      {"set_ratio", o.set_ratio},
      {"keys", o.keys},
      {"vbuckets", o.plain_memcached ? 1 : o.vbuckets},
      {"value_size", o.value_size},
      {"value_json", o.value_json},
      {"durability", durability::toString(o.durability)},
      {"durability_timeout_ms", o.durability_timeout_ms},
      {"preload", o.preload},
      {"keys_in_order", o.keys_in_order},
      {"duration_s", o.requests == 0 ? static_cast<double>(o.duration.count()) / 1000 : 0.0},
      {"requests", o.requests},
      {"report_interval_s", static_cast<double>(o.report_interval.count()) / 1000},
      {"seed", o.seed},
  };
  if (o.server_pid) options["server_pid"] = *o.server_pid;
  if (o.slow_log.count() > 0) options["slow_log_us"] = o.slow_log.count();

  const LatencyHistogram& h = result.latency;
  nlohmann::json intervals = nlohmann::json::array();
  for (const Interval& i : result.intervals) {
    nlohmann::json line = {
        {"end_s", i.end_s}, {"seconds", i.seconds}, {"ops", i.ops}, {"ops_per_s", i.ops_per_s}};
    if (i.server) {
      line["server"] = {{"rss_kb", i.server->rss_kb},
                        {"threads", i.server->threads},
                        {"open_fds", i.server->open_fds},
                        {"cpu_percent", i.server->cpu_percent}};
    }
    intervals.push_back(std::move(line));
  }
  nlohmann::json json = {
      {"tool", "mcbp_load"},
      {"options", std::move(options)},
      {"ops", result.ops},
      {"elapsed_s", result.elapsed_s},
      {"ops_per_s", result.opsPerSecond()},
      {"latency_us",
       {{"min", micros(h.min())},
        {"p50", micros(h.percentile(50))},
        {"p99", micros(h.percentile(99))},
        {"p99_9", micros(h.percentile(99.9))},
        {"max", micros(h.max())}}},
      {"statuses", statusJson(result.statuses)},
      {"errors", result.errors},
      {"intervals", std::move(intervals)},
  };
  if (o.preload) {
    json["preload"] = {{"seconds", result.preload_s},
                       {"statuses", statusJson(result.preload_statuses)}};
  }
  if (o.slow_log.count() > 0) {
    nlohmann::json slow = nlohmann::json::array();
    for (const SlowRequest& r : result.slow) {
      slow.push_back({{"answered_unix_s", r.answered_unix_s}, {"latency_us", r.latency_us}});
    }
    json["slow_requests"] = std::move(slow);
  }
  if (result.server_cpu_s) json["server_cpu_s"] = *result.server_cpu_s;
  if (auto per_op = cpuPerOpMicros(result)) json["server_cpu_us_per_op"] = *per_op;
  return json;
}

}  // namespace syncwrite::bench::mcbp_load
