// BucketMemory and CheckpointMemoryRecovery: every byte a bucket holds for
// items is counted while it is held and uncounted when freed; recovery,
// woken at the upper mark, expels what every reader has read down to the
// lower mark, and cannot free what a reader still needs.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "executor/executor_pool.h"
#include "vbucket/bucket_memory.h"
#include "vbucket/checkpoint_manager.h"
#include "vbucket/checkpoint_memory_recovery.h"
#include "vbucket/hash_table.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::vbucket {
namespace {

constexpr auto kGuard = std::chrono::seconds(60);

int64_t managerBytes(const CheckpointManager& m) {
  return static_cast<int64_t>(m.stats().memory_bytes);
}

TEST(BucketMemory, CheckpointBytesFollowTheEntriesFromQueueToExpel) {
  BucketMemory memory;
  {
    CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 4, .memory = &memory});
    std::vector<QueuedItem> held;
    for (int i = 0; i < 10; ++i) {
      held.push_back(
          m.queue(QueueOp::kMutation, "key" + std::to_string(i), std::string(100, 'v'), 1));
    }
    EXPECT_EQ(memory.checkpointBytes(), managerBytes(m));
    EXPECT_GT(memory.checkpointBytes(), 10 * 100);
    // Every block is counted once, whoever holds it.
    EXPECT_GE(memory.itemBytes(), memory.checkpointBytes() - 10 * int64_t{sizeof(CheckpointEntry)});

    const int64_t before = memory.checkpointBytes();
    ExpelledItems out = m.extractItemsToExpel();  // no cursor: everything counts as read
    ASSERT_GT(out.bytes(), 0u);
    EXPECT_EQ(memory.checkpointBytes(), before - static_cast<int64_t>(out.bytes()));
    EXPECT_EQ(memory.checkpointBytes(), managerBytes(m));
    out.release();
    // The items are still held here: their blocks stay counted.
    EXPECT_GT(memory.itemBytes(), 10 * 100);
    held.clear();
    // Only what the open checkpoint still holds is left.
    EXPECT_EQ(memory.checkpointBytes(), managerBytes(m));
  }
  EXPECT_EQ(memory.checkpointBytes(), 0) << "the manager's destruction gives its bytes back";
  EXPECT_EQ(memory.itemBytes(), 0) << "every block was freed and uncounted";
}

TEST(BucketMemory, APrepareAndItsCommitAreTwoEntriesOfOneBlock) {
  BucketMemory memory;
  CheckpointManager m(CheckpointOptions{.memory = &memory});
  QueuedPrepare prepare = m.queuePrepare("k", std::string(50, 'p'), 1);
  const int64_t one_entry = memory.checkpointBytes();
  const int64_t block = memory.itemBytes();
  m.queueResolution(QueueOp::kCommit, prepare);
  EXPECT_EQ(memory.checkpointBytes(), 2 * one_entry);
  EXPECT_EQ(memory.itemBytes(), block) << "the commit's entry lives in the prepare's block";
  EXPECT_EQ(memory.checkpointBytes(), managerBytes(m));
}

TEST(BucketMemory, TheIndexCountsEachKeyOnceWhileItIsHeld) {
  BucketMemory memory;
  CheckpointManager m(CheckpointOptions{.memory = &memory});
  {
    HashTable table(&memory);
    table.setCommitted(m.queue(QueueOp::kMutation, "alpha", "1", 1));
    EXPECT_EQ(memory.indexBytes(), static_cast<int64_t>(HashTable::slotBytes("alpha")));
    table.setCommitted(m.queue(QueueOp::kMutation, "alpha", "2", 2));  // same key
    table.setCommitted(m.queue(QueueOp::kMutation, "beta", "3", 3));
    EXPECT_EQ(memory.indexBytes(),
              static_cast<int64_t>(HashTable::slotBytes("alpha") + HashTable::slotBytes("beta")));
    EXPECT_TRUE(table.erase("alpha"));
    EXPECT_EQ(memory.indexBytes(), static_cast<int64_t>(HashTable::slotBytes("beta")));
  }
  EXPECT_EQ(memory.indexBytes(), 0) << "the table's destruction gives its keys back";
}

TEST(BucketMemory, TheTriggerFiresOnceAboveTheUpperMarkUntilRecoveryIsDone) {
  BucketMemory memory;
  int calls = 0;
  memory.setRecoveryTrigger([&calls] { ++calls; });
  // Quota 1000: checkpoint quota 500, upper mark 400, lower mark 250.
  memory.setLimits(1000, 50, 80, 50);
  const MemoryLimits limits = memory.limits();
  EXPECT_EQ(limits.checkpoint_quota, 500);
  EXPECT_EQ(limits.upper_mark, 400);
  EXPECT_EQ(limits.lower_mark, 250);

  memory.addCheckpointBytes(400);
  EXPECT_EQ(calls, 0) << "at the mark is not above it";
  memory.addCheckpointBytes(1);
  memory.addCheckpointBytes(10);
  EXPECT_EQ(calls, 1) << "a burst above the mark wakes recovery once";
  memory.recoveryDone();
  memory.addCheckpointBytes(-11);
  memory.addCheckpointBytes(5);
  EXPECT_EQ(calls, 2);

  EXPECT_FALSE(memory.shouldRefuseWrites());
  memory.addCheckpointBytes(500 - memory.checkpointBytes());
  EXPECT_TRUE(memory.shouldRefuseWrites()) << "the checkpoint quota is reached";
  memory.addCheckpointBytes(-500);
  memory.addItemBytes(999);
  EXPECT_FALSE(memory.shouldRefuseWrites());
  memory.addIndexBytes(1);
  EXPECT_TRUE(memory.shouldRefuseWrites()) << "mem_used reached max_size";
}

TEST(BucketMemory, LimitsLoweredBelowWhatIsHeldStartARecovery) {
  BucketMemory memory;
  int calls = 0;
  memory.setRecoveryTrigger([&calls] { ++calls; });
  memory.addCheckpointBytes(1000);
  EXPECT_EQ(calls, 0) << "no limits yet";
  memory.setLimits(2000, 50, 90, 60);  // upper mark 900
  EXPECT_EQ(calls, 1);
}

TEST(CheckpointManager, TheListenerIsToldOfEveryQueuedItemWithItsVbucket) {
  struct Counting final : QueueListener {
    void queued(Vbid vbid, QueueOp) noexcept override { seen.push_back(vbid); }
    std::vector<Vbid> seen;
  } listener;
  VBucketMap map(4, VBucketState::kActive, CheckpointOptions{.listener = &listener});
  CheckpointManager& m = map.at(3).checkpointManager();
  m.queue(QueueOp::kMutation, "k", "v", 1);
  QueuedPrepare prepare = m.queuePrepare("p", "v", 2);
  m.queueResolution(QueueOp::kAbort, prepare);
  map.at(1).checkpointManager().queue(QueueOp::kMutation, "k", "v", 3);
  EXPECT_EQ(listener.seen, (std::vector<Vbid>{3, 3, 3, 1}));
}

// A bucket-like set-up: a map whose vbuckets charge one BucketMemory.
struct Fixture {
  explicit Fixture(size_t vbuckets = 8)
      : map(vbuckets, VBucketState::kActive,
            CheckpointOptions{.max_items_per_checkpoint = 16, .memory = &memory}) {}
  // Queues `n` 200-byte values per vbucket.
  void fill(int n) {
    for (size_t vb = 0; vb < map.size(); ++vb) {
      for (int i = 0; i < n; ++i) {
        map.at(static_cast<Vbid>(vb))
            .checkpointManager()
            .queue(QueueOp::kMutation, "k" + std::to_string(i), std::string(200, 'v'), 1);
      }
    }
  }
  BucketMemory memory;
  VBucketMap map;
};

TEST(CheckpointMemoryRecovery, ARunExpelsDownToTheLowerMarkAndClearsTheRequest) {
  executor::ExecutorPool pool(1);
  Fixture f;
  CheckpointMemoryRecovery recovery("test", f.map, f.memory, pool, std::chrono::hours(1));
  f.fill(100);
  const int64_t held = f.memory.checkpointBytes();
  // Set the marks under what is held, with a quota it is far from.
  f.memory.setLimits(static_cast<uint64_t>(held) * 10, 10, 50, 20);
  // setLimits woke the task; runNow() is the same run, deterministic.
  EXPECT_TRUE(recovery.runNow());
  EXPECT_LE(f.memory.checkpointBytes(), f.memory.limits().lower_mark);
  EXPECT_FALSE(f.memory.recoveryRequested());
  const RecoveryStats s = recovery.stats();
  EXPECT_GE(s.runs, 1u);
  EXPECT_GT(s.items_expelled, 0u);
  EXPECT_GT(s.checkpoints_removed, 0u);
  EXPECT_GE(s.bytes_freed, static_cast<uint64_t>(held - f.memory.limits().lower_mark));
}

TEST(CheckpointMemoryRecovery, TheTaskIsWokenByWritesCrossingTheUpperMark) {
  executor::ExecutorPool pool(1);
  Fixture f;
  // A run racing the fill may end above the mark: its retry comes soon.
  CheckpointMemoryRecovery recovery("test", f.map, f.memory, pool, std::chrono::milliseconds(1));
  f.memory.setLimits(200000, 50, 50, 10);  // upper mark 50,000 B, lower 10,000 B
  EXPECT_EQ(recovery.stats().runs, 0u) << "nothing runs below the mark";
  f.fill(100);  // ~8 × 100 × 300 B: well above the upper mark
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  while ((f.memory.recoveryRequested() || f.memory.aboveUpperMark()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(f.memory.aboveUpperMark());
  EXPECT_GE(recovery.stats().runs, 1u);
}

TEST(CheckpointMemoryRecovery, AReaderThatHasNotReadKeepsItsItems) {
  executor::ExecutorPool pool(1);
  Fixture f(1);
  CheckpointMemoryRecovery recovery("test", f.map, f.memory, pool, std::chrono::hours(1));
  CheckpointManager& m = f.map.at(0).checkpointManager();
  ASSERT_TRUE(m.registerCursor("replica"));
  f.fill(100);
  const int64_t held = f.memory.checkpointBytes();
  f.memory.setLimits(static_cast<uint64_t>(held) * 10, 10, 50, 20);
  EXPECT_FALSE(recovery.runNow()) << "nothing read: nothing can go";
  EXPECT_EQ(f.memory.checkpointBytes(), held);
  EXPECT_TRUE(f.memory.recoveryRequested()) << "the request stays set for the retry";
  EXPECT_GE(recovery.stats().runs_above_upper_mark, 1u);

  m.readItems("replica", 80);  // the reader moves
  EXPECT_TRUE(recovery.runNow());
  EXPECT_LT(f.memory.checkpointBytes(), held);
  EXPECT_EQ(m.itemsRemaining("replica"), 20u) << "what it has not read is still there";
}

}  // namespace
}  // namespace syncwrite::vbucket
