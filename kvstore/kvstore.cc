#include "kvstore/kvstore.h"

#include <cstdarg>
#include <cstdio>
#include <iostream>
#include <utility>

#include <absl/strings/str_cat.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

// Debian's librocksdb is not built with ThreadSanitizer: the lazily made
// statics and atomics its own threads share are invisible to it, which it
// reports as races between RocksDB's threads (e.g. in
// rocksdb::RegisterCacheDeleterRole, allocated by its stats thread). Only
// races with a frame in that library are suppressed; ours stay reported.
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() { return "race:librocksdb.so\n"; }
#endif

namespace syncwrite::kvstore {
namespace {

constexpr const char* kPrepares = "prepares";
constexpr const char* kStates = "vbstate";

std::string prefixed(Vbid vbid, std::string_view key) {
  std::string out;
  out.reserve(2 + key.size());
  out.push_back(static_cast<char>(vbid >> 8));
  out.push_back(static_cast<char>(vbid & 0xff));
  out.append(key);
  return out;
}

absl::Status fromRocks(const rocksdb::Status& status, std::string_view what,
                       const std::filesystem::path& dir) {
  if (status.ok()) return absl::OkStatus();
  const std::string message =
      absl::StrCat(std::string(what), " ", dir.string(), ": RocksDB ", status.ToString());
  return status.IsCorruption() ? absl::DataLossError(message) : absl::UnavailableError(message);
}

// RocksDB's own log, its errors only, as lines to `log_` (or to
// stderr): never a LOG file in the data directory, which shares the disk's
// failures — RocksDB, built with assertions as Debian's is, aborts on a line
// logged after a failed write of its LOG file.
class LineLogger final : public rocksdb::Logger {
 public:
  explicit LineLogger(KVStore::Log log)
      : rocksdb::Logger(rocksdb::InfoLogLevel::ERROR_LEVEL), log_(std::move(log)) {}
  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char line[512];
    std::vsnprintf(line, sizeof line, format, ap);
    const std::string text = absl::StrCat("rocksdb: ", line);
    if (log_) {
      log_(text);
    } else {
      std::cerr << text << '\n';
    }
  }

 private:
  const KVStore::Log log_;
};

}  // namespace

void KVStore::Batch::putCommitted(Vbid vbid, const DocumentRecord& record) {
  ops_.push_back({Family::kCommitted, false, prefixed(vbid, record.key), encodeRecord(record)});
}

void KVStore::Batch::putPrepare(Vbid vbid, const DocumentRecord& record) {
  ops_.push_back({Family::kPrepares, false, prefixed(vbid, record.key), encodeRecord(record)});
}

void KVStore::Batch::erasePrepare(Vbid vbid, std::string_view key) {
  ops_.push_back({Family::kPrepares, true, prefixed(vbid, key), {}});
}

void KVStore::Batch::putState(Vbid vbid, std::string_view state_json) {
  ops_.push_back({Family::kStates, false, prefixed(vbid, {}), std::string(state_json)});
}

absl::StatusOr<std::unique_ptr<KVStore>> KVStore::open(const std::filesystem::path& dir, Log log) {
  std::unique_ptr<KVStore> store(new KVStore());
  store->dir_ = dir;
  store->logger_ = std::make_shared<LineLogger>(std::move(log));
  absl::StatusOr<std::unique_ptr<DataDirLock>> lock = DataDirLock::acquire(dir);
  if (!lock.ok()) return lock.status();
  store->lock_ = std::move(*lock);

  if (absl::Status s = store->openDatabase(); !s.ok()) return s;
  return store;
}

absl::Status KVStore::openDatabase() {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.info_log = logger_;
  // Memtables as vectors, sorted when they are flushed or read: the store is
  // written all the time and read only at warmup, and the default skip
  // list's ordered inserts were most of the flusher's CPU under durable
  // writes (docs/persistence.md).
  rocksdb::ColumnFamilyOptions family_options;
  family_options.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  options.allow_concurrent_memtable_write = false;  // a vector memtable has one writer
  // Memtables of 8 MiB (RocksDB's default is 64 MiB, two per family): the
  // process's memory stays within a few tens of MiB of its items however
  // long it runs, at the cost of more, smaller flushes to SST files in
  // RocksDB's background thread.
  family_options.write_buffer_size = size_t{8} << 20;
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, family_options},
      {kPrepares, family_options},
      {kStates, family_options},
  };
  rocksdb::DB* db = nullptr;
  const rocksdb::Status opened =
      rocksdb::DB::Open(options, (dir_ / "rocksdb").string(), families, &families_, &db);
  if (absl::Status s = fromRocks(opened, "cannot open the database in", dir_); !s.ok()) return s;
  db_.reset(db);
  return absl::OkStatus();
}

void KVStore::closeDatabase() {
  if (!db_) return;
  for (rocksdb::ColumnFamilyHandle* family : families_) {
    (void)db_->DestroyColumnFamilyHandle(family);
  }
  families_.clear();
  (void)db_->Close();
  db_.reset();
}

KVStore::~KVStore() { closeDatabase(); }

absl::Status KVStore::write(Batch& batch) {
  // A database that failed a write is opened again before the next one:
  // RocksDB keeps the failed log writer and refuses (or, built with
  // assertions as Debian's is, aborts on) any later write through it; a new
  // open replays the log up to its last whole record. While the disk is
  // still full or failing the open fails too, and so does this write.
  if (failed_.load(std::memory_order_relaxed) || !db_) {
    closeDatabase();
    if (absl::Status s = openDatabase(); !s.ok()) return s;
  }
  rocksdb::WriteBatch rocks;
  for (const Batch::Op& op : batch.ops_) {
    rocksdb::ColumnFamilyHandle* family = families_[static_cast<size_t>(op.family)];
    const rocksdb::Status s =
        op.erase ? rocks.Delete(family, op.key) : rocks.Put(family, op.key, op.value);
    if (!s.ok()) return fromRocks(s, "cannot build a write batch for", dir_);
  }
  rocksdb::WriteOptions options;
  options.sync = true;
  absl::Status written = fromRocks(db_->Write(options, &rocks), "cannot write to", dir_);
  failed_.store(!written.ok(), std::memory_order_relaxed);
  if (written.ok()) batch.ops_.clear();
  return written;
}

absl::Status KVStore::forEach(rocksdb::ColumnFamilyHandle* family, Vbid vbid,
                              const Visit& visit) const {
  if (!db_) return closed();
  const std::string prefix = prefixed(vbid, {});
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), family));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const rocksdb::Slice key = it->key();
    absl::StatusOr<DocumentRecord> record =
        decodeRecord(std::string_view(key.data() + 2, key.size() - 2), it->value().ToStringView());
    if (!record.ok()) {
      return absl::DataLossError(
          absl::StrCat("vbucket ", vbid, " in ", dir_.string(), ": ", record.status().message()));
    }
    if (absl::Status s = visit(*record); !s.ok()) return s;
  }
  return fromRocks(it->status(), "cannot read", dir_);
}

absl::Status KVStore::closed() const {
  return absl::UnavailableError(
      absl::StrCat("the database in ", dir_.string(), " is closed after a failed write"));
}

absl::Status KVStore::forEachCommitted(Vbid vbid, const Visit& visit) const {
  return forEach(db_ ? families_[0] : nullptr, vbid, visit);
}

absl::Status KVStore::forEachPrepare(Vbid vbid, const Visit& visit) const {
  return forEach(db_ ? families_[1] : nullptr, vbid, visit);
}

absl::StatusOr<std::map<Vbid, std::string>> KVStore::states() const {
  if (!db_) return closed();
  std::map<Vbid, std::string> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), families_[2]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (key.size() != 2) {
      return absl::DataLossError(absl::StrCat("a vbucket state in ", dir_.string(),
                                              " has a key of ", key.size(), " bytes, not 2"));
    }
    const auto vbid =
        static_cast<Vbid>((static_cast<uint8_t>(key[0]) << 8) | static_cast<uint8_t>(key[1]));
    out.emplace(vbid, it->value().ToString());
  }
  if (absl::Status s = fromRocks(it->status(), "cannot read", dir_); !s.ok()) return s;
  return out;
}

}  // namespace syncwrite::kvstore
