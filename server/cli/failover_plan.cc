#include "server/cli/failover_plan.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <nlohmann/json.hpp>

namespace syncwrite::server::cli {
namespace {

// A chain as names, "" for a null slot.
using Chain = std::vector<std::string>;

absl::StatusOr<Chain> firstChain(const std::string& topology, const std::string& where) {
  const nlohmann::json json = nlohmann::json::parse(topology, nullptr, false);
  if (!json.is_array() || json.empty() || !json[0].is_array() || json[0].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": topology is not chains' JSON: ", topology));
  }
  Chain chain;
  for (const nlohmann::json& node : json[0]) {
    if (node.is_null()) {
      chain.emplace_back();
    } else if (node.is_string()) {
      chain.push_back(node.get<std::string>());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": a chain names nodes or null: ", topology));
    }
  }
  return chain;
}

std::string chainJson(const Chain& chain) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const std::string& node : chain) {
    nodes.push_back(node.empty() ? nlohmann::json(nullptr) : nlohmann::json(node));
  }
  return nlohmann::json::array({nodes}).dump();
}

std::string chainText(const Chain& chain) {
  return absl::StrJoin(chain, ", ", [](std::string* out, const std::string& node) {
    absl::StrAppend(out, node.empty() ? "null" : node);
  });
}

const VbucketReport* reportOf(const ClusterReports& reports, const std::string& node, uint16_t vb) {
  auto n = reports.find(node);
  if (n == reports.end()) return nullptr;
  auto v = n->second.find(vb);
  return v == n->second.end() ? nullptr : &v->second;
}

}  // namespace

absl::StatusOr<std::map<uint16_t, VbucketReport>> parseVbucketDetails(
    const std::vector<std::pair<std::string, std::string>>& stats) {
  std::map<uint16_t, VbucketReport> out;
  for (const auto& [name, value] : stats) {
    if (name.rfind("vb_", 0) != 0) continue;
    const size_t colon = name.find(':');
    const std::string id = name.substr(3, colon == std::string::npos ? colon : colon - 3);
    uint32_t vb = 0;
    if (!absl::SimpleAtoi(id, &vb) || vb > UINT16_MAX) {
      return absl::InvalidArgumentError(absl::StrCat("stat ", name, ": not a vbucket's"));
    }
    VbucketReport& report = out[static_cast<uint16_t>(vb)];
    const std::string field = colon == std::string::npos ? "" : name.substr(colon + 1);
    if (field.empty()) {
      report.state = value;
    } else if (field == "topology") {
      report.topology = value;
    } else if (field == "high_seqno" || field == "high_prepared_seqno") {
      uint64_t& slot = field == "high_seqno" ? report.high_seqno : report.high_prepared_seqno;
      if (!absl::SimpleAtoi(value, &slot)) {
        return absl::InvalidArgumentError(
            absl::StrCat("stat ", name, " is not a number: \"", value, "\""));
      }
    }
  }
  return out;
}

absl::StatusOr<FailoverPlan> planFailover(const std::string& failed,
                                          const ClusterReports& reports) {
  if (reports.contains(failed)) {
    return absl::InvalidArgumentError(
        absl::StrCat("node '", failed, "' answered: a failover is for a node that is down"));
  }
  std::map<uint16_t, const VbucketReport*> chosen;  // each vbucket's chain, as reported
  for (const auto& [node, vbuckets] : reports) {
    for (const auto& [vb, report] : vbuckets) {
      const VbucketReport*& slot = chosen[vb];
      if (slot == nullptr || (report.state == "active" && slot->state != "active")) {
        slot = &report;
      }
    }
  }
  FailoverPlan plan;
  for (const auto& [vb, report] : chosen) {
    absl::StatusOr<Chain> chain = firstChain(report->topology, absl::StrCat("vbucket ", vb));
    if (!chain.ok()) return chain.status();
    auto at = std::find(chain->begin(), chain->end(), failed);
    if (at == chain->end()) continue;
    const bool was_active = at == chain->begin();
    Chain next;
    for (const std::string& node : *chain) {
      if (node != failed && !node.empty()) next.push_back(node);
    }
    if (was_active) {
      // find_max_replica: the highest (high prepared seqno, high seqno) of
      // the chain's replicas that answered; the first of equals.
      std::optional<size_t> best;
      std::tuple<uint64_t, uint64_t> best_seqnos;
      for (size_t i = 0; i < next.size(); ++i) {
        const VbucketReport* r = reportOf(reports, next[i], vb);
        if (r == nullptr || r->state != "replica") continue;
        const std::tuple<uint64_t, uint64_t> seqnos{r->high_prepared_seqno, r->high_seqno};
        if (!best || seqnos > best_seqnos) {
          best = i;
          best_seqnos = seqnos;
        }
      }
      if (!best) {
        plan.lines.push_back(absl::StrCat("vbucket ", vb, ": no replica of [", chainText(*chain),
                                          "] survives; it has no active until '", failed,
                                          "' returns"));
        continue;
      }
      std::rotate(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(*best),
                  next.begin() + static_cast<std::ptrdiff_t>(*best) + 1);
    }
    next.resize(chain->size());  // null slots where the failed node was
    const std::string topology = chainJson(next);
    for (size_t i = 0; i < next.size() && !next[i].empty(); ++i) {
      plan.changes.push_back(
          {vb, next[i], i == 0 ? protocol::VbucketState::kActive : protocol::VbucketState::kReplica,
           topology});
    }
    for (const auto& [node, vbuckets] : reports) {
      if (std::find(next.begin(), next.end(), node) == next.end() && vbuckets.contains(vb)) {
        plan.changes.push_back({vb, node, protocol::VbucketState::kDead, topology});
      }
    }
    if (was_active) {
      const VbucketReport* r = reportOf(reports, next.front(), vb);
      plan.lines.push_back(absl::StrCat("vbucket ", vb, ": '", next.front(),
                                        "' promoted (high prepared seqno ", r->high_prepared_seqno,
                                        ", high seqno ", r->high_seqno, "); chain [",
                                        chainText(next), "]"));
    } else {
      plan.lines.push_back(absl::StrCat("vbucket ", vb, ": chain [", chainText(next), "]"));
    }
  }
  return plan;
}

}  // namespace syncwrite::server::cli
