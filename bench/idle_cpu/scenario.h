// Scenarios of the idle-CPU harness and the server configuration each runs.
//
// A scenario is B empty buckets of 1024 vbuckets in one timeout mode, with
// the polling visitor reading one clock. The harness runs the grid
// buckets × modes (visitor clock coarse, the production choice), and, with
// --slow-clock, the slow-clock pair: polling, the same buckets, visitor clock
// syscall then coarse (what a clock source such as HPET does to polling).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/idle_cpu/options.h"

namespace syncwrite::bench {

struct Scenario {
  std::string group;  // "idle" (the grid) or "slow_clock"
  unsigned buckets = 1;
  std::string mode;                      // polling | event-driven
  std::string visitor_clock = "coarse";  // coarse | precise | syscall
  unsigned vbuckets = 1024;
  unsigned interval_ms = 25;  // durability_timeout_task_interval

  // "polling B=30" or "slow_clock polling B=3 clock=syscall".
  std::string Name() const;
};

// The grid in order (for each bucket count, each mode), then the slow-clock
// pair (syscall first) when options.slow_clock.
std::vector<Scenario> ScenariosFor(const Options& options);

// syncwrite-server's configuration file for the scenario: buckets b0..b<B-1>,
// each with the scenario's mode, interval, clock and vbucket count, and one
// simulated replica (an idle bucket still has a replication chain). The
// executor sizes its NonIO group itself (num_nonio_threads 0), as in
// production.
nlohmann::json ServerConfigFor(const Scenario& scenario);

}  // namespace syncwrite::bench
