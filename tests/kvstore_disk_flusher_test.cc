// DiskFlusher: what a run leaves in the KVStore — the last version of each
// key, a commit as the committed document with its own seqno, an aborted
// prepare gone, an outstanding one in the prepare key space, the vbucket's
// state beside them — and that it reports a vbucket persisted only after the
// synced write, and only where a prepare waits for it.
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "executor/executor_pool.h"
#include "kvstore/disk_flusher.h"
#include "kvstore/kvstore.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::kvstore {
namespace {

using durability::testing::eventually;
using vbucket::QueueOp;
using vbucket::Seqno;

class DiskFlusherTest : public ::testing::Test {
 protected:
  DiskFlusherTest() {
    char pattern[] = "/tmp/syncwrite-flusher-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    auto opened = KVStore::open(dir_);
    EXPECT_TRUE(opened.ok()) << opened.status();
    store_ = std::move(*opened);
    flusher_ = std::make_unique<DiskFlusher>(
        "flusher", map_, pool_, *store_,
        [this](Vbid vbid, Seqno seqno) {
          // The write is on disk before the report: a second reader sees it.
          std::lock_guard<std::mutex> lock(mutex_);
          auto states = store_->states();
          on_disk_at_report_.push_back(states.ok() && states->contains(vbid));
          persisted_.emplace_back(vbid, seqno);
        },
        [](Vbid vbid, Seqno high) {
          return "{\"vb\":" + std::to_string(vbid) + ",\"high_seqno\":" + std::to_string(high) +
                 "}";
        },
        [this](std::string_view line) {
          std::lock_guard<std::mutex> lock(mutex_);
          log_.emplace_back(line);
        });
  }
  ~DiskFlusherTest() override {
    flusher_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::vector<std::pair<Vbid, Seqno>> persisted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return persisted_;
  }

  std::vector<DocumentRecord> read(bool prepares, Vbid vbid) {
    std::vector<DocumentRecord> out;
    auto add = [&](const DocumentRecord& r) {
      out.push_back(r);
      return absl::OkStatus();
    };
    const absl::Status s =
        prepares ? store_->forEachPrepare(vbid, add) : store_->forEachCommitted(vbid, add);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  vbucket::CheckpointManager& log(Vbid vbid) { return map_.at(vbid).checkpointManager(); }

  std::filesystem::path dir_;
  vbucket::VBucketMap map_{2, vbucket::VBucketState::kActive};
  executor::ExecutorPool pool_{1};
  std::unique_ptr<KVStore> store_;
  std::mutex mutex_;
  std::vector<std::pair<Vbid, Seqno>> persisted_;
  std::vector<bool> on_disk_at_report_;
  std::vector<std::string> log_;
  std::unique_ptr<DiskFlusher> flusher_;
};

TEST_F(DiskFlusherTest, ABatchLeavesTheLastVersionOfEachKeyAndTheOutstandingPrepares) {
  vbucket::CheckpointManager& vb0 = log(0);
  vb0.queue(QueueOp::kMutation, "a", "a1", 11);                                       // 1
  vb0.queue(QueueOp::kMutation, "a", "a2", 12, false, {.flags = 7});                  // 2
  vbucket::QueuedPrepare committed = vb0.queuePrepare("c", "c1", 13, false, {}, 1);   // 3
  vb0.queueResolution(QueueOp::kCommit, committed);                                   // 4
  vbucket::QueuedPrepare aborted = vb0.queuePrepare("x", "never", 14, false, {}, 1);  // 5
  vb0.queueResolution(QueueOp::kAbort, aborted);                                      // 6
  vbucket::QueuedPrepare pending = vb0.queuePrepare("p", "p1", 15, false, {}, 3);     // 7
  vb0.queue(QueueOp::kMutation, "d", "", 16, /*deleted=*/true);                       // 8
  flusher_->markDirty(0, true);
  ASSERT_TRUE(eventually([&] { return !persisted().empty(); }));
  EXPECT_EQ(persisted(), (std::vector<std::pair<Vbid, Seqno>>{{0, 8}}));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    EXPECT_EQ(on_disk_at_report_, std::vector<bool>{true});
  }
  const std::vector<DocumentRecord> docs = read(false, 0);
  ASSERT_EQ(docs.size(), 3u);  // a, c, d (key order)
  EXPECT_EQ(docs[0].key, "a");
  EXPECT_EQ(docs[0].value, "a2");
  EXPECT_EQ(docs[0].seqno, 2u);
  EXPECT_EQ(docs[0].flags, 7u);
  EXPECT_EQ(docs[1].key, "c");
  EXPECT_EQ(docs[1].value, "c1");
  EXPECT_EQ(docs[1].seqno, 4u);  // the commit's, not the prepare's 3
  EXPECT_EQ(docs[1].cas, 13u);
  EXPECT_EQ(docs[2].key, "d");
  EXPECT_TRUE(docs[2].deleted);
  const std::vector<DocumentRecord> prepares = read(true, 0);
  ASSERT_EQ(prepares.size(), 1u);  // x was aborted: never on disk as a prepare
  EXPECT_EQ(prepares[0].key, "p");
  EXPECT_EQ(prepares[0].seqno, 7u);
  EXPECT_EQ(prepares[0].level, 3u);
  auto states = store_->states();
  ASSERT_TRUE(states.ok());
  EXPECT_EQ(states->at(0), "{\"vb\":0,\"high_seqno\":8}");
  EXPECT_FALSE(states->contains(1));  // nothing queued there
  EXPECT_EQ(flusher_->batches(), 1u);
  EXPECT_EQ(flusher_->itemsFlushed(), 8u);
  EXPECT_EQ(flusher_->itemsQueued(), 0u);

  // The pending prepare commits in a later batch: the prepare leaves its key
  // space and the document takes the commit's seqno.
  vb0.queueResolution(QueueOp::kCommit, pending);  // 9
  flusher_->markDirty(0, false);
  ASSERT_TRUE(eventually([&] { return flusher_->batches() == 2; }));
  EXPECT_TRUE(read(true, 0).empty());
  const std::vector<DocumentRecord> after = read(false, 0);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[3].key, "p");
  EXPECT_EQ(after[3].seqno, 9u);
  // No prepare in that batch: nothing waits, nothing is reported.
  EXPECT_EQ(persisted().size(), 1u);
}

TEST_F(DiskFlusherTest, APausedFlusherWritesNothingUntilResumed) {
  flusher_->setPaused(true);
  vbucket::QueuedPrepare p = log(1).queuePrepare("k", "v", 1, false, {}, 1);
  flusher_->markDirty(1, true);
  // The run the mark woke has had time to write, had it not been paused
  // (an absence, not a bound on time: a slow machine cannot fail it).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(flusher_->batches(), 0u);
  EXPECT_TRUE(read(true, 1).empty());
  EXPECT_EQ(flusher_->itemsQueued(), 1u);
  flusher_->setPaused(false);
  ASSERT_TRUE(eventually([&] { return !persisted().empty(); }));
  EXPECT_EQ(persisted(), (std::vector<std::pair<Vbid, Seqno>>{{1, 1}}));
  EXPECT_EQ(read(true, 1).size(), 1u);
}

TEST_F(DiskFlusherTest, WhatIsQueuedAtDestructionIsWritten) {
  flusher_->setPaused(true);
  log(0).queue(QueueOp::kMutation, "late", "v", 1);
  flusher_->markDirty(0, false);
  flusher_.reset();
  ASSERT_EQ(read(false, 0).size(), 1u);
  EXPECT_EQ(read(false, 0)[0].key, "late");
}

}  // namespace
}  // namespace syncwrite::kvstore
