// The idle_cpu harness's command line.
//
//   idle_cpu [--buckets 1,10,30] [--modes polling,event-driven] [--window S]
//            [--settle S] [--json PATH] [--server PATH] [--slow-clock]
//            [--slow-clock-buckets N] [--top N] [--start-timeout S]
//
// The flags are Abseil flags declared in options.cc and set by parseFlags
// (server/command_line.h, which says the syntax: "--window 2" or
// "--window=2"; lists are comma-separated).
#pragma once

#include <string>
#include <vector>

#include <absl/status/statusor.h>

namespace syncwrite::bench {

struct Options {
  std::vector<unsigned> buckets = {1, 10, 30};  // scenarios' bucket counts
  std::vector<std::string> modes = {"polling", "event-driven"};
  double window_s = 10;  // sampling window
  double settle_s = 1;   // wait between "listening" and the first sample
  std::string json_path = "bench/results/idle_cpu.json";
  std::string server_path;  // empty: <directory of this binary>/syncwrite-server
  bool slow_clock = false;  // also run the slow-clock scenario
  unsigned slow_clock_buckets = 3;
  unsigned top_threads = 5;     // threads shown per scenario
  double start_timeout_s = 60;  // hang guard: server start and stop
  bool help = false;
};

// The usage text printed by --help and after a bad option: every flag with
// its default.
std::string Usage();

// Parses argv[1..argc), starting from the flags' defaults every time.
// InvalidArgument naming the option and the value when an option is unknown
// or lacks its value, a list is empty or has an empty or non-numeric item, a
// bucket count is 0, a mode is not one of polling, event-driven, a duration is
// not a number, the window or start timeout is not positive, the settle time
// is negative, or a positional argument is given. Not thread-safe (the flags
// are global).
absl::StatusOr<Options> ParseOptions(int argc, const char* const* argv);

}  // namespace syncwrite::bench
