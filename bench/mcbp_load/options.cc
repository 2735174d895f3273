#include "bench/mcbp_load/options.h"

#include <algorithm>
#include <string>

#include <absl/strings/str_cat.h>

namespace syncwrite::bench::mcbp_load {

namespace {

struct OpName {
  Op op;
  std::string_view name;
};

constexpr OpName kOpNames[] = {{Op::kSet, "set"},         {Op::kGet, "get"},
                               {Op::kMix, "mix"},         {Op::kAdd, "add"},
                               {Op::kReplace, "replace"}, {Op::kDelete, "delete"}};

}  // namespace

absl::StatusOr<Op> parseOp(std::string_view name) {
  for (const OpName& entry : kOpNames) {
    if (entry.name == name) return entry.op;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--op: \"", std::string(name), "\" is not one of set, get, mix, add, replace, delete"));
}

std::string_view toString(Op op) noexcept {
  for (const OpName& entry : kOpNames) {
    if (entry.op == op) return entry.name;
  }
  return "unknown";
}

absl::StatusOr<durability::Level> parseDurability(std::string_view name) {
  std::optional<durability::Level> level = durability::levelFromString(name);
  if (!level) {
    return absl::InvalidArgumentError(
        absl::StrCat("--durability: \"", std::string(name),
                     "\" is not one of none, majority, majority_and_persist_on_master, "
                     "persist_to_majority"));
  }
  return *level;
}

absl::Status validate(const LoadOptions& options) {
  if (options.connections < 1) return absl::InvalidArgumentError("--connections must be >= 1");
  if (options.depth < 1 || options.depth > 65536) {
    return absl::InvalidArgumentError("--depth must be in [1, 65536]");
  }
  if (options.quiet_batch > 4096) {
    return absl::InvalidArgumentError("--quiet-batch must be in [0, 4096]");
  }
  if (options.keys < 1) return absl::InvalidArgumentError("--keys must be >= 1");
  if (options.vbuckets < 1 || options.vbuckets > 65536) {
    return absl::InvalidArgumentError("--vbuckets must be in [1, 65536]");
  }
  if (!(options.set_ratio >= 0 && options.set_ratio <= 1)) {
    return absl::InvalidArgumentError("--set-ratio must be in [0, 1]");
  }
  if (options.requests == 0 && options.duration.count() <= 0) {
    return absl::InvalidArgumentError("--duration must be > 0 (or give --requests)");
  }
  if (options.durability != durability::Level::kNone) {
    if (options.plain_memcached) {
      return absl::InvalidArgumentError(
          "--durability needs a server that speaks it: not with --plain-memcached");
    }
    if (options.op == Op::kGet) {
      return absl::InvalidArgumentError("--durability applies to mutations: not with --op get");
    }
  }
  return absl::OkStatus();
}

unsigned threadCount(const LoadOptions& options) noexcept {
  if (options.threads == 0) return options.connections;
  return std::min(options.threads, options.connections);
}

}  // namespace syncwrite::bench::mcbp_load
