#include "bench/idle_cpu/options.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>

#include <absl/flags/flag.h>
#include <absl/status/status.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "server/command_line.h"
#include "server/parse_number.h"

// The harness's flags. Global (ABSL_FLAG): only idle_cpu and its tests link
// this file.
ABSL_FLAG(std::vector<std::string>, buckets, std::vector<std::string>({"1", "10", "30"}),
          "bucket counts (each at least 1), comma-separated: one scenario per count and mode");
ABSL_FLAG(std::vector<std::string>, modes, std::vector<std::string>({"polling", "event-driven"}),
          "timeout modes, comma-separated: polling, event-driven");
ABSL_FLAG(double, window, 10, "sampling window in seconds (positive)");
ABSL_FLAG(double, settle, 1,
          "wait in seconds after the server listens, before sampling (zero or more)");
ABSL_FLAG(std::string, json, "bench/results/idle_cpu.json", "results file");
ABSL_FLAG(std::string, server, "", "syncwrite-server binary; empty: the one beside idle_cpu");
ABSL_FLAG(bool, slow_clock, false,
          "also run the slow-clock scenario: polling, visitor clock syscall vs coarse");
ABSL_FLAG(uint32_t, slow_clock_buckets, 3, "buckets in the slow-clock scenario (at least 1)");
ABSL_FLAG(uint32_t, top, 5, "threads listed per scenario");
ABSL_FLAG(double, start_timeout, 60,
          "hang guard in seconds for the server's start and stop (positive)");

namespace syncwrite::bench {
namespace {

// This file, whose flags are idle_cpu's (see server::parseFlags).
constexpr char kFlagsFile[] = "bench/idle_cpu/options.cc";

absl::Status Bad(std::string_view option, std::string_view value, std::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(option), " \"", std::string(value),
                                                 "\": expected ", std::string(expected)));
}

absl::Status CheckSeconds(std::string_view option, double value, bool allow_zero) {
  if (std::isfinite(value) && (allow_zero ? value >= 0 : value > 0)) return absl::OkStatus();
  return Bad(option, absl::StrCat(value), allow_zero ? "seconds ≥ 0" : "seconds > 0");
}

}  // namespace

std::string Usage() {
  return server::flagsHelp(R"(usage: idle_cpu [flags]
Starts syncwrite-server once per scenario (B empty buckets of 1024 vbuckets, one
timeout mode), lets it settle, and measures its CPU over a window.
)",
                           kFlagsFile);
}

absl::StatusOr<Options> ParseOptions(int argc, const char* const* argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<server::CommandLine> line = server::parseFlags(args, kFlagsFile);
  if (!line.ok()) return line.status();
  if (!line->positional.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", line->positional.front(), "\""));
  }
  Options o;
  o.help = line->help;

  const std::vector<std::string> buckets = absl::GetFlag(FLAGS_buckets);
  o.buckets.clear();
  for (const std::string& item : buckets) {
    const std::optional<unsigned> count = server::parseNumber<unsigned>(item, 1);
    if (!count) break;
    o.buckets.push_back(*count);
  }
  if (o.buckets.empty() || o.buckets.size() != buckets.size()) {
    return Bad("--buckets", absl::StrJoin(buckets, ","),
               "a comma-separated list of bucket counts ≥ 1");
  }
  o.modes = absl::GetFlag(FLAGS_modes);
  if (o.modes.empty() || !std::all_of(o.modes.begin(), o.modes.end(), [](const std::string& m) {
        return m == "polling" || m == "event-driven";
      })) {
    return Bad("--modes", absl::StrJoin(o.modes, ","),
               "a comma-separated list of polling, event-driven");
  }

  o.window_s = absl::GetFlag(FLAGS_window);
  o.settle_s = absl::GetFlag(FLAGS_settle);
  o.start_timeout_s = absl::GetFlag(FLAGS_start_timeout);
  for (const auto& [option, value, allow_zero] :
       {std::tuple{"--window", o.window_s, false}, std::tuple{"--settle", o.settle_s, true},
        std::tuple{"--start-timeout", o.start_timeout_s, false}}) {
    if (absl::Status s = CheckSeconds(option, value, allow_zero); !s.ok()) return s;
  }
  o.json_path = absl::GetFlag(FLAGS_json);
  if (o.json_path.empty()) return Bad("--json", "", "a path");
  o.server_path = absl::GetFlag(FLAGS_server);
  o.slow_clock = absl::GetFlag(FLAGS_slow_clock);
  o.slow_clock_buckets = absl::GetFlag(FLAGS_slow_clock_buckets);
  if (o.slow_clock_buckets == 0) {
    return Bad("--slow-clock-buckets", "0", "an integer ≥ 1");
  }
  o.top_threads = absl::GetFlag(FLAGS_top);
  return o;
}

}  // namespace syncwrite::bench
