// The machine a measurement came from, as docs/benchmarks.md reports it:
// cores, CPU model, kernel, clock source, clock ticks per second.
#pragma once

#include <string>
#include <string_view>

namespace syncwrite::bench {

struct MachineInfo {
  unsigned cores = 0;        // online CPUs
  std::string cpu_model;     // "model name" of /proc/cpuinfo
  std::string kernel;        // uname -sr
  std::string clock_source;  // current_clocksource of the kernel
  long clk_tck = 0;          // sysconf(_SC_CLK_TCK): the unit of /proc CPU times
};

// The first "model name" value of /proc/cpuinfo text; "unknown" if none.
std::string CpuModelFromCpuinfo(std::string_view cpuinfo);

// Reads the live machine. Fields it cannot read are "unknown" (never fails).
MachineInfo ReadMachineInfo();

}  // namespace syncwrite::bench
