// KVStore: a bucket's vbuckets on disk, in one RocksDB database under the
// bucket's data directory (kv_engine shipped a RocksDB KVStore of its own
// until 2023, engines/ep/src/rocksdb-kvstore/, removed in 4490b0e43).
//
// Three column families, every key prefixed with its vbucket's id (2 bytes,
// big-endian, so one vbucket's keys are one range):
//   "default"   committed documents and deletions (tombstones), by key;
//   "prepares"  outstanding prepares, by key — kept apart from committed
//               values, as kv_engine keeps its prepare namespace;
//   "vbstate"   one entry per vbucket: its state as a JSON text the caller
//               writes (kv_engine's vbucket_state keys), by vbucket id.
// Values are DocumentRecords (document_record.h).
//
// write() applies a Batch as one atomic RocksDB WriteBatch with sync on: when
// it returns OK, everything in the batch is on disk (one fsync of the
// write-ahead log covers the whole batch: group commit), and a crash at any
// moment leaves either all of a batch or none of it.
//
// The directory is locked for the store's lifetime (DataDirLock): a second
// open() of it, from this process or another, is refused naming the holder.
//
// Thread-safety: the readers (forEach*, states) may run on any threads
// together, and writes on one thread at a time, but not both at once: a write
// after a failed one reopens the database (the server reads at warmup,
// before its flusher writes). A Batch belongs to one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "kvstore/data_dir_lock.h"
#include "kvstore/document_record.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Logger;
}  // namespace rocksdb

namespace syncwrite::kvstore {

using Vbid = uint16_t;

class KVStore {
 public:
  // What one write() applies, in the order it was built.
  class Batch {
   public:
    // A committed document or a deletion (record.deleted: a tombstone).
    void putCommitted(Vbid vbid, const DocumentRecord& record);
    // An outstanding prepare, replacing any earlier one of its key.
    void putPrepare(Vbid vbid, const DocumentRecord& record);
    // The key's prepare was committed or aborted: it is outstanding no more.
    void erasePrepare(Vbid vbid, std::string_view key);
    // The vbucket's state, replacing the last one written.
    void putState(Vbid vbid, std::string_view state_json);
    size_t operations() const noexcept { return ops_.size(); }

   private:
    friend class KVStore;
    enum class Family : uint8_t { kCommitted, kPrepares, kStates };
    struct Op {
      Family family;
      bool erase = false;
      std::string key;  // with its vbucket prefix
      std::string value;
    };
    std::vector<Op> ops_;
  };

  // Opens (creating if needed) the store in `dir`. FailedPrecondition when
  // another store holds the directory (the message names the holder's PID);
  // Unavailable or DataLoss, with RocksDB's status and the path, when the
  // database cannot be opened. RocksDB's errors go to `log`, a
  // line each, from any thread (empty: to stderr); it keeps no LOG file.
  using Log = std::function<void(std::string_view line)>;
  static absl::StatusOr<std::unique_ptr<KVStore>> open(const std::filesystem::path& dir,
                                                       Log log = {});
  ~KVStore();
  KVStore(const KVStore&) = delete;
  KVStore& operator=(const KVStore&) = delete;

  // Applies `batch` atomically and syncs it (see the file comment), then
  // empties it. On an error (the path and RocksDB's status in the message)
  // nothing of the batch is applied and the batch is left as it was, to be
  // written again; the next write first opens the database again (RocksDB
  // keeps a failed log writer), and fails while that open fails.
  absl::Status write(Batch& batch);

  // Calls `visit` with each committed record (tombstones included) of
  // `vbid`, in key order; stops at the first error `visit` returns, or at a
  // record that does not decode (DataLoss naming it).
  using Visit = std::function<absl::Status(const DocumentRecord&)>;
  absl::Status forEachCommitted(Vbid vbid, const Visit& visit) const;
  // The same for `vbid`'s outstanding prepares.
  absl::Status forEachPrepare(Vbid vbid, const Visit& visit) const;
  // Every vbucket state written, by vbucket.
  absl::StatusOr<std::map<Vbid, std::string>> states() const;

  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  KVStore() = default;
  absl::Status forEach(rocksdb::ColumnFamilyHandle* family, Vbid vbid, const Visit& visit) const;
  // Opens db_ and families_ on dir_ (see open()); closes them (idempotent).
  absl::Status openDatabase();
  void closeDatabase();
  // Unavailable: db_ is closed (a reopen after a failed write failed).
  absl::Status closed() const;

  std::filesystem::path dir_;
  std::unique_ptr<DataDirLock> lock_;
  std::atomic<bool> failed_{false};  // the last write failed
  std::shared_ptr<rocksdb::Logger> logger_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> families_;  // default, prepares, vbstate
};

}  // namespace syncwrite::kvstore
