#include "bench/idle_cpu/options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <system_error>

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::bench {
namespace {

absl::Status Bad(std::string_view option, std::string_view value, std::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(option), " \"", std::string(value),
                                                 "\": expected ", std::string(expected)));
}

std::vector<std::string_view> SplitCommas(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

absl::Status ParseUnsigned(std::string_view option, std::string_view value, unsigned min,
                           unsigned& out) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < min) {
    return Bad(option, value, absl::StrCat("an integer ≥ ", min));
  }
  out = v;
  return absl::OkStatus();
}

absl::Status ParseSeconds(std::string_view option, std::string_view value, bool allow_zero,
                          double& out) {
  const std::string text(value);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(v) &&
                  (allow_zero ? v >= 0 : v > 0);
  if (!ok) return Bad(option, value, allow_zero ? "seconds ≥ 0" : "seconds > 0");
  out = v;
  return absl::OkStatus();
}

absl::Status ParseBuckets(std::string_view value, std::vector<unsigned>& out) {
  std::vector<unsigned> buckets;
  for (std::string_view item : SplitCommas(value)) {
    unsigned b = 0;
    if (!ParseUnsigned("--buckets", item, 1, b).ok()) {
      return Bad("--buckets", value, "a comma-separated list of bucket counts ≥ 1");
    }
    buckets.push_back(b);
  }
  out = std::move(buckets);
  return absl::OkStatus();
}

absl::Status ParseModes(std::string_view value, std::vector<std::string>& out) {
  std::vector<std::string> modes;
  for (std::string_view item : SplitCommas(value)) {
    if (item != "polling" && item != "event-driven") {
      return Bad("--modes", value, "a comma-separated list of polling, event-driven");
    }
    modes.emplace_back(item);
  }
  out = std::move(modes);
  return absl::OkStatus();
}

}  // namespace

std::string Usage() {
  return R"(usage: idle_cpu [options]
Starts syncwrite-server once per scenario (B empty buckets of 1024 vbuckets, one
timeout mode), lets it settle, and measures its CPU over a window.
  --buckets LIST        bucket counts, comma-separated (default 1,10,30)
  --modes LIST          polling,event-driven (default both)
  --window S            sampling window in seconds (default 10)
  --settle S            wait after the server listens, before sampling (default 1)
  --json PATH           results file (default bench/results/idle_cpu.json)
  --server PATH         syncwrite-server binary (default: beside idle_cpu)
  --slow-clock          also run the slow-clock scenario: polling, visitor clock
                        syscall vs coarse
  --slow-clock-buckets N  buckets in the slow-clock scenario (default 3)
  --top N               threads listed per scenario (default 5)
  --start-timeout S     hang guard for the server's start and stop (default 60)
  --help                this text
)";
}

absl::StatusOr<Options> ParseOptions(int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view name = arg;
    std::string_view value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (name == "--help" || name == "-h") {
      o.help = true;
      continue;
    }
    if (name == "--slow-clock") {
      if (has_value) return Bad(name, value, "no value");
      o.slow_clock = true;
      continue;
    }
    static constexpr std::string_view kWithValue[] = {
        "--buckets",      "--modes",  "--window", "--settle",
        "--json",         "--server", "--top",    "--slow-clock-buckets",
        "--start-timeout"};
    bool known = false;
    for (std::string_view k : kWithValue) known = known || k == name;
    if (!known)
      return absl::InvalidArgumentError(absl::StrCat("unknown option \"", std::string(arg), "\""));
    if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat(std::string(name), " needs a value"));
      }
      value = argv[++i];
    }
    absl::Status s;
    if (name == "--buckets") {
      s = ParseBuckets(value, o.buckets);
    } else if (name == "--modes") {
      s = ParseModes(value, o.modes);
    } else if (name == "--window") {
      s = ParseSeconds(name, value, /*allow_zero=*/false, o.window_s);
    } else if (name == "--settle") {
      s = ParseSeconds(name, value, /*allow_zero=*/true, o.settle_s);
    } else if (name == "--start-timeout") {
      s = ParseSeconds(name, value, /*allow_zero=*/false, o.start_timeout_s);
    } else if (name == "--top") {
      s = ParseUnsigned(name, value, 0, o.top_threads);
    } else if (name == "--slow-clock-buckets") {
      s = ParseUnsigned(name, value, 1, o.slow_clock_buckets);
    } else if (name == "--json" || name == "--server") {
      if (value.empty()) s = Bad(name, value, "a path");
      (name == "--json" ? o.json_path : o.server_path) = std::string(value);
    }
    if (!s.ok()) return s;
  }
  return o;
}

}  // namespace syncwrite::bench
