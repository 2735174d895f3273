#include "bench/mcbp_load/server_sample.h"

#include <unistd.h>

#include <string>
#include <string_view>
#include <system_error>

#include <absl/strings/ascii.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <absl/strings/strip.h>

#include "bench/idle_cpu/proc_stat.h"
#include "config/read_file.h"

namespace syncwrite::bench::mcbp_load {

namespace {

// The number after "Name:" in a /proc/PID/status line such as
// "VmRSS:\t   1234 kB".
bool statusField(const std::string& text, std::string_view name, uint64_t& value) {
  const absl::string_view prefix(name.data(), name.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, prefix) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripSuffix(absl::StripAsciiWhitespace(line), "kB");
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value);
  }
  return false;
}

}  // namespace

absl::StatusOr<ServerSample> sampleServer(int pid, const std::filesystem::path& proc_root) {
  ServerSample sample;
  sample.taken_at = std::chrono::steady_clock::now();
  const std::filesystem::path dir = proc_root / std::to_string(pid);
  absl::StatusOr<ProcStat> stat = ReadProcStat(pid, proc_root);
  if (!stat.ok()) return stat.status();
  sample.cpu_ticks = stat->ticks();

  absl::StatusOr<std::string> status = config::readFile(dir / "status");
  if (!status.ok()) return absl::NotFoundError(absl::StrCat("no process ", pid));
  if (!statusField(*status, "VmRSS", sample.rss_kb) ||
      !statusField(*status, "Threads", sample.threads)) {
    return absl::InvalidArgumentError(
        absl::StrCat((dir / "status").string(), " lacks VmRSS or Threads"));
  }

  std::error_code error;
  std::filesystem::directory_iterator it(dir / "fd", error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot list ", (dir / "fd").string(), ": ", error.message()));
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) break;
    ++sample.open_fds;
    std::error_code unreadable;  // closed meanwhile: counted, not the store's
    const std::filesystem::path target = std::filesystem::read_symlink(it->path(), unreadable);
    if (!unreadable && target.string().find("/rocksdb/") != std::string::npos) ++sample.store_fds;
  }
  return sample;
}

double ticksToSeconds(uint64_t ticks) {
  static const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  return static_cast<double>(ticks) / static_cast<double>(ticks_per_s > 0 ? ticks_per_s : 100);
}

double cpuPercent(const ServerSample& from, const ServerSample& to) {
  const double seconds = std::chrono::duration<double>(to.taken_at - from.taken_at).count();
  if (seconds <= 0 || to.cpu_ticks < from.cpu_ticks) return 0;
  return 100 * ticksToSeconds(to.cpu_ticks - from.cpu_ticks) / seconds;
}

}  // namespace syncwrite::bench::mcbp_load
