// KVStore on RocksDB: what a batch writes is there after the store is closed
// and opened again; prepares are a key space of their own; a directory is
// held by one store at a time, the refusal naming the holder; a damaged
// record is reported, never loaded.
#include "kvstore/kvstore.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

namespace syncwrite::kvstore {
namespace {

using ::testing::HasSubstr;

class KVStoreTest : public ::testing::Test {
 protected:
  KVStoreTest() {
    dir_ = std::filesystem::temp_directory_path() /
           ("syncwrite-kvstore-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  ~KVStoreTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<KVStore> open() {
    absl::StatusOr<std::unique_ptr<KVStore>> store = KVStore::open(dir_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Every record `read` (forEachCommitted or forEachPrepare) visits in `vbid`.
  using Read = absl::Status (KVStore::*)(Vbid, const KVStore::Visit&) const;
  static std::vector<DocumentRecord> collect(const KVStore& store, Read read, Vbid vbid) {
    std::vector<DocumentRecord> out;
    EXPECT_TRUE((store.*read)(vbid, [&](const DocumentRecord& r) {
                  out.push_back(r);
                  return absl::OkStatus();
                }).ok());
    return out;
  }
  static std::vector<DocumentRecord> committed(const KVStore& store, Vbid vbid) {
    return collect(store, &KVStore::forEachCommitted, vbid);
  }
  static std::vector<DocumentRecord> prepares(const KVStore& store, Vbid vbid) {
    return collect(store, &KVStore::forEachPrepare, vbid);
  }

  std::filesystem::path dir_;
};

TEST_F(KVStoreTest, ABatchIsThereAfterTheStoreIsOpenedAgain) {
  const DocumentRecord a{.key = "a",
                         .value = "1",
                         .seqno = 1,
                         .cas = 11,
                         .flags = 7,
                         .expiry = 1'900'000'000,
                         .datatype = 1};
  const DocumentRecord gone{.key = "gone", .value = "", .seqno = 3, .cas = 13, .deleted = true};
  const DocumentRecord pending{.key = "p", .value = "2", .seqno = 2, .cas = 12, .level = 3};
  const DocumentRecord other_vb{.key = "a", .value = "vb1", .seqno = 1, .cas = 21};
  {
    std::unique_ptr<KVStore> store = open();
    ASSERT_NE(store, nullptr);
    KVStore::Batch batch;
    batch.putCommitted(0, a);
    batch.putCommitted(0, gone);
    batch.putPrepare(0, pending);
    batch.putCommitted(1, other_vb);
    batch.putState(0, R"({"state":"active","high_seqno":3})");
    batch.putState(1, R"({"state":"replica","high_seqno":1})");
    EXPECT_EQ(batch.operations(), 6u);
    ASSERT_TRUE(store->write(batch).ok());
    EXPECT_EQ(batch.operations(), 0u);
  }
  std::unique_ptr<KVStore> store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(committed(*store, 0), (std::vector<DocumentRecord>{a, gone}));
  EXPECT_EQ(committed(*store, 1), (std::vector<DocumentRecord>{other_vb}));
  EXPECT_EQ(prepares(*store, 0), (std::vector<DocumentRecord>{pending}));
  EXPECT_TRUE(prepares(*store, 1).empty());
  absl::StatusOr<std::map<Vbid, std::string>> states = store->states();
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_EQ(states->size(), 2u);
  EXPECT_EQ(states->at(0), R"({"state":"active","high_seqno":3})");
  EXPECT_EQ(states->at(1), R"({"state":"replica","high_seqno":1})");
}

TEST_F(KVStoreTest, ACommitReplacesTheValueAndEndsThePrepare) {
  std::unique_ptr<KVStore> store = open();
  ASSERT_NE(store, nullptr);
  KVStore::Batch first;
  first.putCommitted(0, {.key = "k", .value = "old", .seqno = 1});
  first.putPrepare(0, {.key = "k", .value = "new", .seqno = 2, .level = 1});
  ASSERT_TRUE(store->write(first).ok());
  KVStore::Batch commit;
  commit.putCommitted(0, {.key = "k", .value = "new", .seqno = 3});
  commit.erasePrepare(0, "k");
  ASSERT_TRUE(store->write(commit).ok());
  const std::vector<DocumentRecord> now = committed(*store, 0);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].value, "new");
  EXPECT_EQ(now[0].seqno, 3u);
  EXPECT_TRUE(prepares(*store, 0).empty());
}

TEST_F(KVStoreTest, ASecondStoreOnTheDirectoryIsRefusedNamingTheHolder) {
  std::unique_ptr<KVStore> store = open();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::unique_ptr<KVStore>> second = KVStore::open(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr(dir_.string()));
  EXPECT_THAT(second.status().message(),
              HasSubstr("in use by process " + std::to_string(::getpid())));
  store.reset();
  EXPECT_NE(open(), nullptr) << "free again once the first store is closed";
}

TEST_F(KVStoreTest, ADamagedRecordIsReportedNotLoaded) {
  {
    std::unique_ptr<KVStore> store = open();
    ASSERT_NE(store, nullptr);
    KVStore::Batch batch;
    batch.putCommitted(0, {.key = "good", .value = "v", .seqno = 1});
    ASSERT_TRUE(store->write(batch).ok());
  }
  {
    // A value written past the store: too short for a record's header.
    rocksdb::DB* raw = nullptr;
    rocksdb::Options options;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"prepares", {}}, {"vbstate", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    ASSERT_TRUE(
        rocksdb::DB::Open(options, (dir_ / "rocksdb").string(), families, &handles, &raw).ok());
    ASSERT_TRUE(raw->Put({}, std::string("\0\0short", 7), "xyz").ok());
    for (auto* h : handles) ASSERT_TRUE(raw->DestroyColumnFamilyHandle(h).ok());
    delete raw;
  }
  std::unique_ptr<KVStore> store = open();
  ASSERT_NE(store, nullptr);
  size_t seen = 0;
  const absl::Status read = store->forEachCommitted(0, [&](const DocumentRecord&) {
    ++seen;
    return absl::OkStatus();
  });
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.message(), HasSubstr("\"short\" is 3 bytes, shorter than its header"));
  EXPECT_THAT(read.message(), HasSubstr("vbucket 0"));
  EXPECT_EQ(seen, 1u) << "the good record before it ('good' < 'short') was read";
}

TEST(DocumentRecord, EncodesEveryFieldAndRefusesAnotherVersion) {
  const DocumentRecord r{.key = "k",
                         .value = std::string("v\0w", 3),
                         .seqno = 0x0102030405060708,
                         .cas = ~uint64_t{0},
                         .flags = 0xdeadbeef,
                         .expiry = 42,
                         .datatype = 3,
                         .deleted = true,
                         .level = 2};
  std::string bytes = encodeRecord(r);
  EXPECT_EQ(bytes.size(), kRecordHeaderSize + 3);
  absl::StatusOr<DocumentRecord> back = decodeRecord("k", bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  bytes[0] = 9;
  EXPECT_EQ(decodeRecord("k", bytes).status().code(), absl::StatusCode::kDataLoss);
  bytes[0] = static_cast<char>(kFormatVersion);
  bytes[26] = 4;  // a flag bit that means nothing
  EXPECT_EQ(decodeRecord("k", bytes).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace syncwrite::kvstore
