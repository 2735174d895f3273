// mcbp_load: a pipelined MCBP load generator for syncwrite-server (or any
// memcached binary protocol server, with --plain-memcached). See README.md.
//
// Exit status: 0 the run completed (error statuses in responses are counted,
// not failures), 1 it could not run or a connection failed during it, 2 bad
// command line.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <absl/flags/flag.h>
#include <absl/strings/str_cat.h>

#include "bench/mcbp_load/load.h"
#include "bench/mcbp_load/options.h"
#include "bench/mcbp_load/report.h"
#include "server/command_line.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "server host");
ABSL_FLAG(uint16_t, port, 11210, "server port");
ABSL_FLAG(std::string, bucket, "default", "bucket to select");
ABSL_FLAG(std::string, user, "Administrator", "SASL PLAIN user; empty: no authentication");
ABSL_FLAG(std::string, password, "password", "SASL PLAIN password");
ABSL_FLAG(bool, plain_memcached, false,
          "the server is plain memcached: no HELLO, SASL or SELECT_BUCKET, vbucket 0");
ABSL_FLAG(uint32_t, connections, 4, "connections");
ABSL_FLAG(uint32_t, threads, 0,
          "threads driving the connections, each an event loop over its share; 0: one per "
          "connection");
ABSL_FLAG(uint32_t, depth, 32, "requests in flight per connection");
ABSL_FLAG(uint32_t, quiet_batch, 0,
          "> 0: each slot in flight is this many quiet requests (SETQ, GETKQ, ...) and a NOOP; "
          "latency is per batch");
ABSL_FLAG(std::string, op, "set",
          "set, get, mix (SET with --set-ratio, else GET), add, replace, "
          "delete");
ABSL_FLAG(double, set_ratio, 0.1, "share of SETs with --op mix");
ABSL_FLAG(uint32_t, keys, 100000, "keys key0 .. key<keys-1>, chosen uniformly");
ABSL_FLAG(uint32_t, vbuckets, 1024, "vbuckets of the bucket (a key's vbucket is the SDK's hash)");
ABSL_FLAG(uint32_t, value_size, 100, "value bytes of SET/ADD/REPLACE");
ABSL_FLAG(bool, value_json, false,
          "the value is a JSON document of --value_size bytes (at least 8), not 'v' bytes");
ABSL_FLAG(std::string, durability, "none",
          "durability level of mutations: none, majority, majority_and_persist_on_master, "
          "persist_to_majority");
ABSL_FLAG(uint32_t, durability_timeout_ms, 0,
          "durability timeout sent with durable mutations (1..65535); 0: none sent");
ABSL_FLAG(bool, preload, false, "SET every key once before the timed run");
ABSL_FLAG(bool, keys_in_order, false,
          "each connection walks its share of the keys in order instead of at random (a run of "
          "at most --keys requests uses each key once)");
ABSL_FLAG(double, duration, 10, "seconds of the timed run (unless --requests)");
ABSL_FLAG(uint64_t, requests, 0, "total requests of the timed run; 0: run for --duration");
ABSL_FLAG(double, report_interval, 0, "seconds between interval lines; 0: none");
ABSL_FLAG(std::optional<int>, server_pid, std::nullopt,
          "the server's pid: report its RSS, threads, fds and CPU from /proc");
ABSL_FLAG(uint64_t, slow_log_us, 0,
          "log every timed request slower than this many microseconds with the wall-clock time of "
          "its answer (JSON slow_requests; the first 10000 per connection); 0: none");
ABSL_FLAG(uint64_t, seed, 1, "random seed (each connection derives its own)");
ABSL_FLAG(std::string, json, "", "also write the results as JSON to this file");

namespace syncwrite::bench::mcbp_load {
namespace {

// This file, whose flags are mcbp_load's (see server::parseFlags).
constexpr char kFlagsFile[] = "bench/mcbp_load/mcbp_load_main.cc";

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

absl::StatusOr<LoadOptions> optionsFromFlags() {
  LoadOptions o;
  o.host = absl::GetFlag(FLAGS_host);
  o.port = absl::GetFlag(FLAGS_port);
  o.bucket = absl::GetFlag(FLAGS_bucket);
  o.user = absl::GetFlag(FLAGS_user);
  o.password = absl::GetFlag(FLAGS_password);
  o.plain_memcached = absl::GetFlag(FLAGS_plain_memcached);
  if (o.plain_memcached) o.user.clear();
  o.connections = absl::GetFlag(FLAGS_connections);
  o.threads = absl::GetFlag(FLAGS_threads);
  o.depth = absl::GetFlag(FLAGS_depth);
  o.quiet_batch = absl::GetFlag(FLAGS_quiet_batch);
  absl::StatusOr<Op> op = parseOp(absl::GetFlag(FLAGS_op));
  if (!op.ok()) return op.status();
  o.op = *op;
  o.set_ratio = absl::GetFlag(FLAGS_set_ratio);
  o.keys = absl::GetFlag(FLAGS_keys);
  o.vbuckets = absl::GetFlag(FLAGS_vbuckets);
  o.value_size = absl::GetFlag(FLAGS_value_size);
  o.value_json = absl::GetFlag(FLAGS_value_json);
  absl::StatusOr<durability::Level> level = parseDurability(absl::GetFlag(FLAGS_durability));
  if (!level.ok()) return level.status();
  o.durability = *level;
  const uint32_t timeout_ms = absl::GetFlag(FLAGS_durability_timeout_ms);
  if (timeout_ms > 65535) {
    return absl::InvalidArgumentError("--durability-timeout-ms must be at most 65535");
  }
  o.durability_timeout_ms = static_cast<uint16_t>(timeout_ms);
  o.preload = absl::GetFlag(FLAGS_preload);
  o.keys_in_order = absl::GetFlag(FLAGS_keys_in_order);
  const double duration = absl::GetFlag(FLAGS_duration);
  const double interval = absl::GetFlag(FLAGS_report_interval);
  if (!(duration >= 0) || !(interval >= 0) || duration > 1e6 || interval > 1e6) {
    return absl::InvalidArgumentError("--duration and --report-interval must be in [0, 1e6] s");
  }
  o.duration = millis(duration);
  o.requests = absl::GetFlag(FLAGS_requests);
  o.report_interval = millis(interval);
  o.server_pid = absl::GetFlag(FLAGS_server_pid);
  o.seed = absl::GetFlag(FLAGS_seed);
  const uint64_t slow_log_us = absl::GetFlag(FLAGS_slow_log_us);
  if (slow_log_us > 3'600'000'000) {
    return absl::InvalidArgumentError("--slow-log-us must be at most 3600000000 (an hour)");
  }
  o.slow_log = std::chrono::microseconds(slow_log_us);
  if (absl::Status valid = validate(o); !valid.ok()) return valid;
  return o;
}

int runMain(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<server::CommandLine> line = server::parseFlags(args, kFlagsFile);
  if (line.ok() && line->help) {
    std::cout << server::flagsHelp(R"(usage: mcbp_load [flags]
Drives an MCBP server with pipelined requests from N connections and reports
throughput, latency percentiles and response statuses.
)",
                                   kFlagsFile);
    return 0;
  }
  absl::StatusOr<LoadOptions> options = line.ok() ? optionsFromFlags() : line.status();
  if (options.ok() && !line->positional.empty()) {
    options = absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", line->positional.front(), "\""));
  }
  if (!options.ok()) {
    std::cerr << "mcbp_load: " << options.status().message() << " (--help lists the flags)\n";
    return 2;
  }

  absl::StatusOr<LoadResult> result =
      runLoad(*options, [](const Interval& i) { std::cout << formatInterval(i) << std::endl; });
  if (!result.ok()) {
    std::cerr << "mcbp_load: " << result.status().message() << "\n";
    return 1;
  }
  std::cout << formatSummary(*result) << std::flush;
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream out(path);
    out << toJson(*result).dump(2) << "\n";
    if (!out) {
      std::cerr << "mcbp_load: cannot write " << path << "\n";
      return 1;
    }
  }
  return result->errors.empty() ? 0 : 1;
}

}  // namespace
}  // namespace syncwrite::bench::mcbp_load

int main(int argc, char** argv) { return syncwrite::bench::mcbp_load::runMain(argc, argv); }
