#include "bench/idle_cpu/machine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <thread>

#include <absl/strings/str_cat.h>

#include "config/read_file.h"

namespace syncwrite::bench {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

// The first line of the file at `path`, trimmed, or "unknown".
std::string ReadLine(const char* path) {
  absl::StatusOr<std::string> text = config::readFile(path);
  if (!text.ok() || text->empty()) return "unknown";
  return Trim(std::string_view(*text).substr(0, text->find('\n')));
}

}  // namespace

std::string CpuModelFromCpuinfo(std::string_view cpuinfo) {
  size_t pos = 0;
  while (pos < cpuinfo.size()) {
    size_t end = cpuinfo.find('\n', pos);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && Trim(line.substr(0, colon)) == "model name") {
      std::string model = Trim(line.substr(colon + 1));
      if (!model.empty()) return model;
    }
    pos = end + 1;
  }
  return "unknown";
}

MachineInfo ReadMachineInfo() {
  MachineInfo m;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.cores = online > 0 ? static_cast<unsigned>(online) : std::thread::hardware_concurrency();
  m.cpu_model = CpuModelFromCpuinfo(config::readFile("/proc/cpuinfo").value_or(""));
  utsname u{};
  m.kernel = uname(&u) == 0 ? absl::StrCat(u.sysname, " ", u.release) : "unknown";
  m.clock_source = ReadLine("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  m.clk_tck = sysconf(_SC_CLK_TCK);
  return m;
}

}  // namespace syncwrite::bench
