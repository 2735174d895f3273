// DiskFlusher: the flusher of a persistent bucket — it takes what each
// vbucket's log holds after its persistence cursor and writes it to the
// bucket's KVStore, one synced RocksDB write batch per run, before it reports
// anything persisted.
//
// A run (an executor task, woken by the first mark after a read) reads up to
// kBatch records from every marked vbucket and keeps, per key, what its last
// record leaves on disk: a mutation or a commit becomes the committed record
// (a deletion a tombstone; a commit carries the commit's seqno and the
// prepare's value, as kv_engine's committed item does), a prepare is stored
// in the prepare key space, and a commit or abort erases the key's prepare.
// With them goes each written vbucket's state (`state_of`: its JSON text, as
// kv_engine's vbucket_state), all in one KVStore::write — atomic, and one
// fsync for the whole batch (group commit: writes that arrive while a batch
// syncs go in the next one). Only after that write returns OK is
// `persisted(vbid, last seqno written)` called for each vbucket whose records
// held a prepare (only prepares wait for persistence), with no lock held.
//
// A failed write (a full disk, an I/O error) is logged once with the path and
// RocksDB's status (`log`), kept whole and written again after a backoff of
// 10 ms doubling to 1 s; nothing more is read meanwhile, so the log behind
// the cursor stays in memory (the bucket's quota then refuses writes) and
// persist-level SyncWrites wait and time out. The recovery is logged too.
//
// Paused (flusher_paused): reads nothing, as a stuck disk. With a delay
// (flush_delay_ms), a run that finds a vbucket marked waits that long, then
// takes everything queued by then (a slow disk).
//
// Thread-safety: every member may be called from any thread; a run is never
// concurrent with itself. Lifetime: the map, the pool and the store must
// outlive the flusher; `persisted`, `state_of` and `log` must stay callable
// until its destructor returns (it unregisters its task, waiting for a run in
// progress).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/executor_pool.h"
#include "kvstore/kvstore.h"
#include "vbucket/flusher.h"
#include "vbucket/log_cursor_reader.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::kvstore {

class DiskFlusher final : public vbucket::Flusher {
 public:
  using Persisted = std::function<void(vbucket::Vbid, vbucket::Seqno)>;
  // The vbucket's state to store beside records up to `high_seqno`.
  using StateOf = std::function<std::string(vbucket::Vbid, vbucket::Seqno high_seqno)>;
  using Log = std::function<void(std::string_view line)>;

  static constexpr std::string_view kCursor = "persistence";
  // Records read from one vbucket per run.
  static constexpr size_t kBatch = 4096;
  static constexpr std::chrono::milliseconds kFirstBackoff{10};
  static constexpr std::chrono::milliseconds kMaxBackoff{1000};

  DiskFlusher(std::string name, vbucket::VBucketMap& map, executor::ExecutorPool& pool,
              KVStore& store, Persisted persisted, StateOf state_of, Log log);
  ~DiskFlusher() override;
  DiskFlusher(const DiskFlusher&) = delete;
  DiskFlusher& operator=(const DiskFlusher&) = delete;

  void markDirty(vbucket::Vbid vbid, bool prepare) noexcept override;
  void setDelay(std::chrono::milliseconds delay) noexcept override;
  void setPaused(bool paused) override;
  bool paused() const noexcept override { return paused_.load(std::memory_order_acquire); }
  uint64_t batches() const noexcept override { return batches_.load(std::memory_order_relaxed); }
  uint64_t itemsFlushed() const noexcept override { return items_.load(std::memory_order_relaxed); }
  // Records not yet on disk: those after the cursors, then those of the
  // batch being written or retried (at least 1 while a run reads).
  size_t itemsQueued() const override {
    const size_t unread = reader_.itemsQueued();
    return unread + unwritten_.load(std::memory_order_seq_cst);
  }

  // Writes that failed (each is retried until it succeeds).
  uint64_t writeFailures() const noexcept override {
    return failures_.load(std::memory_order_relaxed);
  }
  // True while a failed batch waits to be written again.
  bool failing() const noexcept override { return failing_.load(std::memory_order_acquire); }

 private:
  class Task;
  // A batch built and not yet written: what it covers, to report once it is.
  struct Pending {
    KVStore::Batch batch;
    struct Written {
      vbucket::Vbid vbid = 0;
      vbucket::Seqno last_seqno = 0;
      bool prepare = false;
    };
    std::vector<Written> written;
    size_t records = 0;
  };
  // What a run did: wrote something, read a full batch somewhere (run again),
  // or failed (back off).
  struct Ran {
    bool wrote = false;
    bool more = false;
    bool failed = false;
  };
  // Reads the marked vbuckets into pending_ unless it holds a failed batch,
  // then writes pending_. Run by the task only.
  Ran flushOnce();
  void build(vbucket::Vbid vbid, std::vector<vbucket::LogRecord>&& records);

  executor::ExecutorPool& pool_;
  KVStore& store_;
  const Persisted persisted_;
  const StateOf state_of_;
  const Log log_;
  vbucket::LogCursorReader reader_;
  Pending pending_;         // the task's only
  std::string last_error_;  // the task's only: the failure last logged
  std::atomic<int64_t> delay_ms_{0};
  std::atomic<bool> paused_{false};
  std::atomic<bool> failing_{false};
  std::atomic<size_t> unwritten_{0};  // see itemsQueued()
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> items_{0};
  std::atomic<uint64_t> failures_{0};
  executor::Taskable owner_;
  std::shared_ptr<Task> task_;
  executor::TaskId id_ = executor::kNoTask;
};

}  // namespace syncwrite::kvstore
