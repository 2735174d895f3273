#include "bench/idle_cpu/scenario.h"

#include <absl/strings/str_cat.h>

namespace syncwrite::bench {

std::string Scenario::Name() const {
  std::string name = absl::StrCat(mode, " B=", buckets);
  if (group != "idle") name = absl::StrCat(group, " ", name, " clock=", visitor_clock);
  return name;
}

std::vector<Scenario> ScenariosFor(const Options& options) {
  std::vector<Scenario> out;
  for (unsigned b : options.buckets) {
    for (const std::string& mode : options.modes) {
      Scenario s;
      s.group = "idle";
      s.buckets = b;
      s.mode = mode;
      out.push_back(s);
    }
  }
  if (options.slow_clock) {
    for (const char* clock : {"syscall", "coarse"}) {
      Scenario s;
      s.group = "slow_clock";
      s.buckets = options.slow_clock_buckets;
      s.mode = "polling";
      s.visitor_clock = clock;
      out.push_back(s);
    }
  }
  return out;
}

nlohmann::json ServerConfigFor(const Scenario& scenario) {
  nlohmann::json buckets = nlohmann::json::object();
  for (unsigned i = 0; i < scenario.buckets; ++i) {
    buckets[absl::StrCat("b", i)] = {
        {"durability_timeout_mode", scenario.mode},
        {"durability_timeout_task_interval", scenario.interval_ms},
        {"durability_visitor_clock", scenario.visitor_clock},
        {"max_vbuckets", scenario.vbuckets},
        {"replicas", {"replica1"}},
        {"simulated_replicas", {{"replica1", {{"ack_delay_ms", 1}}}}},
    };
  }
  return {{"node_name", "active"}, {"num_nonio_threads", 0}, {"buckets", std::move(buckets)}};
}

}  // namespace syncwrite::bench
