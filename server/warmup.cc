#include "server/warmup.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>

#include "dcp/passive_stream.h"
#include "server/stored_vbucket_state.h"

namespace syncwrite::server {

namespace {

absl::Status lost(vbucket::Vbid vbid, const std::string& what) {
  return absl::DataLossError(absl::StrCat("warmup of vbucket ", vbid, ": ", what));
}

// Loads one vbucket (see the file comment); counts into `stats`.
absl::Status warmVbucket(const kvstore::KVStore& store, vbucket::VBucket& vb,
                         durability::BucketDurability& durability, const std::string& node_name,
                         const NewHistory& new_history, const StoredVBucketState& stored,
                         WarmupStats& stats) {
  const vbucket::Vbid vbid = vb.id();
  stats.max_cas = std::max(stats.max_cas, stored.max_cas);
  std::vector<kvstore::DocumentRecord> records;
  auto keep = [&](const kvstore::DocumentRecord& record) {
    stats.max_cas = std::max(stats.max_cas, record.cas);
    if (!record.deleted || record.level != 0) records.push_back(record);
    return absl::OkStatus();
  };
  if (absl::Status s = store.forEachCommitted(vbid, keep); !s.ok()) return s;
  const size_t documents = records.size();
  if (absl::Status s = store.forEachPrepare(vbid, keep); !s.ok()) return s;
  for (size_t i = documents; i < records.size(); ++i) {
    if (records[i].level == 0) {
      return lost(vbid, absl::StrCat("prepare of key '", records[i].key, "' at seqno ",
                                     records[i].seqno, " has no durability level"));
    }
  }
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.seqno < b.seqno; });

  const bool active = vb.state() == vbucket::VBucketState::kActive;
  if (!records.empty()) {
    // Through the replica's path: the passive monitor takes the prepares.
    if (active) vb.setState(vbucket::VBucketState::kReplica);
    dcp::PassiveStream stream(vb, durability.passiveMonitor(vbid));
    if (absl::Status s = stream.snapshotMarker({.start = records.front().seqno,
                                                .end = records.back().seqno,
                                                .flags = dcp::kSnapshotDisk});
        !s.ok()) {
      return lost(vbid, std::string(s.message()));
    }
    for (const kvstore::DocumentRecord& record : records) {
      const bool prepare = record.level != 0;
      auto applied = stream.item({
          .kind = prepare ? dcp::StreamItemKind::kPrepare : dcp::StreamItemKind::kMutation,
          .seqno = record.seqno,
          .key = record.key,
          .value = record.value,
          .cas = record.cas,
          .meta = {.flags = record.flags, .expiry = record.expiry, .datatype = record.datatype},
          .level = static_cast<durability::Level>(record.level),
          .deleted = record.deleted,
      });
      if (!applied.ok()) return lost(vbid, std::string(applied.status().message()));
    }
  }
  stats.documents += documents;
  stats.prepares += records.size() - documents;

  // What follows is numbered after everything stored; the items stay in
  // the hash table (and the prepares in the monitor).
  const vbucket::Seqno high = std::max(stored.high_seqno, vb.highSeqno());
  vbucket::ExpelledItems emptied = vb.checkpointManager().reset(high);
  if (!stored.failovers.empty()) vb.failovers().replace(stored.failovers);
  durability.notifyLocalPersistence(vbid, high);
  if (active && !records.empty()) {
    absl::StatusOr<size_t> promoted =
        durability.promote(vbid, node_name, durability.topology(vbid));
    if (!promoted.ok()) return lost(vbid, std::string(promoted.status().message()));
    if (documents < records.size()) {
      vbucket::Seqno last_prepare = 0;
      for (const kvstore::DocumentRecord& record : records) {
        if (record.level != 0) last_prepare = record.seqno;
      }
      stats.promoted.emplace_back(vbid, last_prepare);
    }
  }
  if (active) new_history(vbid);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WarmupStats> warmup(const kvstore::KVStore& store, vbucket::VBucketMap& map,
                                   durability::BucketDurability& durability,
                                   const std::string& node_name, const NewHistory& new_history) {
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<std::map<vbucket::Vbid, std::string>> states = store.states();
  if (!states.ok()) return states.status();
  WarmupStats stats;
  for (const auto& [vbid, text] : *states) {
    if (vbid >= map.size()) {
      return lost(vbid, absl::StrCat("stored in ", store.dir().string(), ", but the bucket has ",
                                     map.size(), " vbuckets (was max_vbuckets lowered?)"));
    }
    absl::StatusOr<StoredVBucketState> stored = StoredVBucketState::fromJson(vbid, text);
    if (!stored.ok()) return stored.status();
    if (absl::Status s =
            warmVbucket(store, map.at(vbid), durability, node_name, new_history, *stored, stats);
        !s.ok()) {
      return s;
    }
    ++stats.vbuckets;
  }
  stats.took = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started);
  return stats;
}

}  // namespace syncwrite::server
