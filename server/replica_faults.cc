#include "server/replica_faults.h"

#include <algorithm>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <absl/strings/str_split.h>
#include <absl/strings/strip.h>

#include "server/parse_number.h"

namespace syncwrite::server {
namespace {

absl::Status refused(std::string_view key, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(key), ": \"", std::string(text), "\" ", std::string(why)));
}

// Debian's Abseil has a string_view of its own.
absl::string_view view(std::string_view s) { return absl::string_view(s.data(), s.size()); }
std::string_view std_view(absl::string_view s) { return std::string_view(s.data(), s.size()); }

bool known(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string simulatedNames(const std::vector<std::string>& names) {
  return names.empty() ? "this bucket simulates no replica"
                       : absl::StrCat("simulated replicas: ", absl::StrJoin(names, ", "));
}

}  // namespace

absl::StatusOr<std::map<std::string, std::chrono::milliseconds>> parsePerReplicaMillis(
    std::string_view key, std::string_view text, const std::vector<std::string>& names) {
  std::map<std::string, std::chrono::milliseconds> out;
  const absl::string_view trimmed = absl::StripAsciiWhitespace(view(text));
  if (trimmed.empty()) return out;
  const std::string expected = absl::StrCat("(expected \"N\" or \"replica=N,...\" with N in 0..",
                                            kMaxAckDelayMs, "; ", simulatedNames(names), ")");
  if (trimmed.find('=') == std::string_view::npos) {
    const std::optional<uint64_t> ms = parseNumber<uint64_t>(std_view(trimmed), 0);
    if (!ms || *ms > kMaxAckDelayMs) return refused(key, text, expected);
    for (const std::string& name : names) out[name] = std::chrono::milliseconds(*ms);
    return out;
  }
  for (absl::string_view entry : absl::StrSplit(trimmed, ',')) {
    const std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(entry, '=');
    const std::string_view name = std_view(absl::StripAsciiWhitespace(parts.first));
    const std::optional<uint64_t> ms = parseNumber<uint64_t>(std_view(parts.second), 0);
    if (!ms || *ms > kMaxAckDelayMs) return refused(key, text, expected);
    if (!known(names, name)) {
      return refused(key, text,
                     absl::StrCat("names '", std::string(name),
                                  "', which is not a simulated "
                                  "replica (",
                                  simulatedNames(names), ")"));
    }
    out[std::string(name)] = std::chrono::milliseconds(*ms);
  }
  return out;
}

absl::StatusOr<std::set<std::string>> parsePausedReplicas(std::string_view text,
                                                          const std::vector<std::string>& names) {
  std::set<std::string> out;
  const absl::string_view trimmed = absl::StripAsciiWhitespace(view(text));
  if (trimmed.empty()) return out;
  if (trimmed == "*") return std::set<std::string>(names.begin(), names.end());
  for (absl::string_view entry : absl::StrSplit(trimmed, ',')) {
    const std::string_view name = std_view(absl::StripAsciiWhitespace(entry));
    if (!known(names, name)) {
      return refused("simulated_replicas_paused", text,
                     absl::StrCat("names '", std::string(name),
                                  "', which is not a simulated replica (expected names "
                                  "separated by commas, \"*\" or \"\"; ",
                                  simulatedNames(names), ")"));
    }
    out.insert(std::string(name));
  }
  return out;
}

}  // namespace syncwrite::server
