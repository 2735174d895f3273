#include "bench/idle_cpu/proc_stat.h"

#include <algorithm>
#include <optional>

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include "config/read_file.h"
#include "server/parse_number.h"

namespace syncwrite::bench {
namespace {

// Fields after the comm: state is [0]; utime, stime, num_threads are fields
// 14, 15 and 20 of proc(5), that is [11], [12] and [17] here.
constexpr size_t kStateField = 0;
constexpr size_t kUtimeField = 11;
constexpr size_t kStimeField = 12;
constexpr size_t kNumThreadsField = 17;

// `s` as an Int into `out` (server::parseNumber's syntax); false if it is not one.
template <typename Int>
bool ParseInt(std::string_view s, Int& out) {
  const std::optional<Int> value = server::parseNumber<Int>(s);
  if (value) out = *value;
  return value.has_value();
}

std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\n') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

absl::Status Malformed(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("malformed /proc stat line (", std::string(why),
                                                 "): \"", std::string(text), "\""));
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Malformed(text, "no (comm)");
  }
  ProcStat st;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ParseInt(pid_text, st.pid)) return Malformed(text, "pid is not a number");
  st.comm = std::string(text.substr(open + 1, close - open - 1));

  const std::vector<std::string_view> fields = SplitSpaces(text.substr(close + 1));
  if (fields.size() <= kNumThreadsField) return Malformed(text, "too few fields after the comm");
  if (fields[kStateField].size() != 1) return Malformed(text, "state is not one character");
  st.state = fields[kStateField][0];
  if (!ParseInt(fields[kUtimeField], st.utime)) return Malformed(text, "utime is not a number");
  if (!ParseInt(fields[kStimeField], st.stime)) return Malformed(text, "stime is not a number");
  if (!ParseInt(fields[kNumThreadsField], st.num_threads)) {
    return Malformed(text, "num_threads is not a number");
  }
  return st;
}

absl::StatusOr<uint64_t> ParseSchedstatRuntime(std::string_view text) {
  const std::vector<std::string_view> fields = SplitSpaces(text);
  uint64_t ns = 0;
  if (fields.empty() || !ParseInt(fields[0], ns)) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed schedstat line: \"", std::string(text), "\""));
  }
  return ns;
}

absl::StatusOr<ProcStat> ReadProcStat(int pid, const std::filesystem::path& proc_root) {
  absl::StatusOr<std::string> text = config::readFile(proc_root / std::to_string(pid) / "stat");
  if (!text.ok()) return text.status();
  if (text->empty()) return absl::NotFoundError(absl::StrCat("process ", pid, " has exited"));
  return ParseProcStat(*text);
}

absl::StatusOr<std::vector<ThreadStat>> ListThreads(int pid,
                                                    const std::filesystem::path& proc_root) {
  const std::filesystem::path task_dir = proc_root / std::to_string(pid) / "task";
  std::error_code ec;
  std::filesystem::directory_iterator it(task_dir, ec);
  if (ec) {
    return absl::NotFoundError(absl::StrCat("cannot list ", task_dir.string(), ": ", ec.message()));
  }
  std::vector<ThreadStat> threads;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string entry = it->path().filename().string();
    int tid = 0;
    if (!ParseInt(std::string_view(entry), tid)) continue;  // not a thread
    absl::StatusOr<std::string> stat_text = config::readFile(it->path() / "stat");
    if (!stat_text.ok() || stat_text->empty()) continue;  // exited since the listing
    absl::StatusOr<ProcStat> st = ParseProcStat(*stat_text);
    if (!st.ok()) return st.status();
    ThreadStat thread{tid, st->comm, st->ticks(), std::nullopt};
    // The comm file is the name pthread_setname_np wrote; the stat copy is the
    // fallback if the thread exits between the two reads.
    absl::StatusOr<std::string> comm = config::readFile(it->path() / "comm");
    if (comm.ok() && !comm->empty()) {
      if (comm->back() == '\n') comm->pop_back();
      thread.name = std::move(*comm);
    }
    if (absl::StatusOr<std::string> sched = config::readFile(it->path() / "schedstat");
        sched.ok() && !sched->empty()) {
      absl::StatusOr<uint64_t> ns = ParseSchedstatRuntime(*sched);
      if (!ns.ok()) return ns.status();
      thread.runtime_ns = *ns;
    }
    threads.push_back(std::move(thread));
  }
  if (ec) {
    return absl::NotFoundError(absl::StrCat("cannot list ", task_dir.string(), ": ", ec.message()));
  }
  std::sort(threads.begin(), threads.end(),
            [](const ThreadStat& a, const ThreadStat& b) { return a.tid < b.tid; });
  return threads;
}

}  // namespace syncwrite::bench
