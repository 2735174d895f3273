// CheckpointManager: queueing and seqnos, cursors, and expel — nothing a
// cursor has not read is expelled, cursors stay valid, statistics stay right.
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vbucket/bucket_memory.h"
#include "vbucket/checkpoint_manager.h"

namespace syncwrite::vbucket {
namespace {

using testing::ElementsAre;
using testing::ElementsAreArray;

std::vector<Seqno> seqnosOf(const std::vector<LogRecord>& items) {
  std::vector<Seqno> out;
  for (const LogRecord& r : items) out.push_back(r.seqno);
  return out;
}

std::vector<Seqno> seqnosOf(const ExpelledItems& items) {
  std::vector<Seqno> out;
  items.forEach([&](const LogRecord& r) { out.push_back(r.seqno); });
  return out;
}

std::vector<Seqno> range(Seqno first, Seqno last) {
  std::vector<Seqno> out;
  for (Seqno s = first; s <= last; ++s) out.push_back(s);
  return out;
}

// Queues `n` mutations "k<seqno>" and returns the bytes they account for.
size_t queueN(CheckpointManager& m, int n) {
  size_t bytes = 0;
  for (int i = 0; i < n; ++i) {
    auto item = m.queue(QueueOp::kMutation, "k" + std::to_string(m.highSeqno() + 1), "v", 1);
    bytes += sizeof(CheckpointEntry) + item->estimatedSize();
  }
  return bytes;
}

TEST(CheckpointManager, SeqnosStartAtOneAndFollowQueueOrder) {
  CheckpointManager m;
  EXPECT_EQ(m.highSeqno(), 0u);
  auto a = m.queue(QueueOp::kMutation, "a", "1", 7);
  auto p = m.queue(QueueOp::kPrepare, "b", "2", 8);
  auto c = m.queue(QueueOp::kCommit, "b", "2", 8);
  auto x = m.queue(QueueOp::kAbort, "c", "", 9);
  EXPECT_EQ(a->seqno, 1u);
  EXPECT_EQ(p->seqno, 2u);
  EXPECT_EQ(c->seqno, 3u);
  EXPECT_EQ(x->seqno, 4u);
  EXPECT_EQ(p->op, QueueOp::kPrepare);
  EXPECT_EQ(p->key(), "b");
  EXPECT_EQ(p->cas, 8u);
  EXPECT_EQ(m.highSeqno(), 4u);
}

TEST(CheckpointManager, ConcurrentQueuesGetDistinctSeqnosInLogOrder) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 64});
  ASSERT_TRUE(m.registerCursor("reader"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { queueN(m, 500); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.highSeqno(), 2000u);
  EXPECT_THAT(seqnosOf(m.readItems("reader")), ElementsAreArray(range(1, 2000)));
}

TEST(CheckpointManager, CursorReadsInOrderAcrossCheckpoints) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 3});
  ASSERT_TRUE(m.registerCursor("dcp"));
  EXPECT_FALSE(m.registerCursor("dcp"));
  queueN(m, 10);
  EXPECT_EQ(m.stats().num_checkpoints, 4u);  // 3 + 3 + 3 + 1
  EXPECT_EQ(m.itemsRemaining("dcp"), 10u);
  EXPECT_THAT(seqnosOf(m.readItems("dcp", 4)), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(m.itemsRemaining("dcp"), 6u);
  EXPECT_THAT(seqnosOf(m.readItems("dcp")), ElementsAreArray(range(5, 10)));
  EXPECT_TRUE(m.readItems("dcp").empty());
  queueN(m, 1);
  EXPECT_THAT(seqnosOf(m.readItems("dcp")), ElementsAre(11));
  EXPECT_THROW(m.readItems("nobody"), std::invalid_argument);
  EXPECT_THROW(m.itemsRemaining("nobody"), std::invalid_argument);
}

TEST(CheckpointManager, VisitItemsReadsWhatReadItemsWouldWithoutCopying) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 3});
  ASSERT_TRUE(m.registerCursor("flusher"));
  ASSERT_TRUE(m.registerCursor("copy"));
  queueN(m, 5);
  QueuedPrepare prepare = m.queuePrepare("p", "v", 1);
  m.queueResolution(QueueOp::kCommit, prepare);
  std::vector<std::pair<QueueOp, Seqno>> visited;
  auto note = [&](QueueOp op, Seqno seqno) { visited.emplace_back(op, seqno); };
  EXPECT_EQ(m.visitItems("flusher", 4, note), 4u);
  EXPECT_EQ(m.itemsRemaining("flusher"), 3u);
  EXPECT_EQ(m.visitItems("flusher", SIZE_MAX, note), 3u);
  EXPECT_EQ(m.visitItems("flusher", SIZE_MAX, note), 0u);
  std::vector<std::pair<QueueOp, Seqno>> copied;
  for (const LogRecord& r : m.readItems("copy")) copied.emplace_back(r.op, r.seqno);
  EXPECT_EQ(visited, copied);
  EXPECT_EQ(visited[5], std::make_pair(QueueOp::kPrepare, Seqno{6}));
  EXPECT_EQ(visited[6], std::make_pair(QueueOp::kCommit, Seqno{7}));
  // Both cursors are at the head: everything can go.
  EXPECT_EQ(m.extractItemsToExpel().count(), 7u);
  EXPECT_THROW(m.visitItems("nobody", 1, note), std::invalid_argument);
}

TEST(CheckpointManager, ExpelNeverRemovesWhatASlowCursorHasNotRead) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("fast");
  m.registerCursor("slow");
  queueN(m, 10);
  m.readItems("fast");
  m.readItems("slow", 4);

  ExpelledItems expelled = m.extractItemsToExpel();
  EXPECT_THAT(seqnosOf(expelled), ElementsAre(1, 2, 3, 4));
  // Nothing more goes until the slow cursor moves.
  EXPECT_TRUE(m.extractItemsToExpel().empty());

  // Both cursors still read exactly what they had not read.
  EXPECT_THAT(seqnosOf(m.readItems("slow")), ElementsAreArray(range(5, 10)));
  EXPECT_TRUE(m.readItems("fast").empty());
  queueN(m, 2);
  EXPECT_THAT(seqnosOf(m.readItems("fast")), ElementsAre(11, 12));
  EXPECT_EQ(m.itemsRemaining("slow"), 2u);
}

TEST(CheckpointManager, CursorOnTheLastExpelledItemStaysValid) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("a");
  m.registerCursor("b");
  queueN(m, 5);
  m.readItems("a", 3);
  m.readItems("b", 3);  // both stand on seqno 3, which is expelled
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(1, 2, 3));
  EXPECT_EQ(m.itemsRemaining("a"), 2u);
  EXPECT_THAT(seqnosOf(m.readItems("a", 1)), ElementsAre(4));
  // Expel again: only what both have passed (b is still at 3).
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  EXPECT_THAT(seqnosOf(m.readItems("b")), ElementsAre(4, 5));
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(4));
  queueN(m, 1);
  EXPECT_THAT(seqnosOf(m.readItems("a")), ElementsAre(5, 6));
  EXPECT_THAT(seqnosOf(m.readItems("b")), ElementsAre(6));
}

TEST(CheckpointManager, CountsAndMemoryAreRightAfterExpel) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("c");
  const size_t first_bytes = queueN(m, 6);
  const size_t second_bytes = queueN(m, 4);
  EXPECT_EQ(m.stats().num_items, 10u);
  EXPECT_EQ(m.stats().memory_bytes, first_bytes + second_bytes);

  m.readItems("c", 6);
  ExpelledItems expelled = m.extractItemsToExpel();
  EXPECT_EQ(expelled.count(), 6u);
  EXPECT_EQ(expelled.bytes(), first_bytes);

  const CheckpointStats s = m.stats();
  EXPECT_EQ(s.num_items, 4u);
  EXPECT_EQ(s.memory_bytes, second_bytes);
  EXPECT_EQ(s.items_expelled, 6u);
  EXPECT_EQ(s.bytes_expelled, first_bytes);
  EXPECT_EQ(s.high_seqno, 10u);
  EXPECT_EQ(m.itemsRemaining("c"), 4u);
}

// A block's charge to the bucket's item bytes goes when the block is freed:
// what these tests watch to see whether an item is still alive.
TEST(CheckpointManager, ExpelledItemsAreFreedWhenDropped) {
  BucketMemory memory;
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0, .memory = &memory});
  m.registerCursor("c");
  m.queue(QueueOp::kMutation, "a", "x", 1);  // the returned reference is dropped at once
  queueN(m, 3);
  m.readItems("c");  // and these
  ASSERT_GT(memory.itemBytes(), 0);
  {
    ExpelledItems expelled = m.extractItemsToExpel();
    EXPECT_EQ(expelled.count(), 4u);
    EXPECT_GT(memory.itemBytes(), 0) << "the expelled object owns the items until it is dropped";
  }
  EXPECT_EQ(memory.itemBytes(), 0);
}

TEST(CheckpointManager, AResolutionIsReadAsItsOwnOpAndSeqnoOverThePreparesItem) {
  CheckpointManager m;
  m.registerCursor("c");
  QueuedPrepare p = m.queuePrepare("k", "value", 5);
  queueN(m, 1);
  EXPECT_EQ(m.queueResolution(QueueOp::kCommit, p), 3u);
  EXPECT_FALSE(p.resolvable()) << "the reserved entry is used up";
  const std::vector<LogRecord> log = m.readItems("c");
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].op, QueueOp::kPrepare);
  EXPECT_EQ(log[0].seqno, 1u);
  EXPECT_EQ(log[2].op, QueueOp::kCommit);
  EXPECT_EQ(log[2].seqno, 3u);
  EXPECT_EQ(log[2].item, p.item) << "the commit refers to the prepare, not a copy";
  EXPECT_EQ(log[2].item->seqno, 1u);
  EXPECT_EQ(log[2].item->value(), "value");
}

TEST(CheckpointManager, QueueResolutionRefusesMisuseAndQueuesNothing) {
  CheckpointManager m;
  QueuedPrepare p = m.queuePrepare("k", "v", 1);
  EXPECT_THROW(m.queueResolution(QueueOp::kMutation, p), std::invalid_argument);
  EXPECT_THROW(m.queueResolution(QueueOp::kPrepare, p), std::invalid_argument);
  EXPECT_TRUE(p.resolvable());
  m.queueResolution(QueueOp::kAbort, p);
  EXPECT_THROW(m.queueResolution(QueueOp::kCommit, p), std::invalid_argument)
      << "a prepare is resolved once";
  QueuedPrepare none{m.queue(QueueOp::kPrepare, "j", "v", 1)};
  EXPECT_FALSE(none.resolvable()) << "a prepare not from queuePrepare has no reserved entry";
  EXPECT_THROW(m.queueResolution(QueueOp::kCommit, none), std::invalid_argument);
  EXPECT_EQ(m.highSeqno(), 3u);
  EXPECT_EQ(m.stats().num_items, 3u);
}

TEST(CheckpointManager, APrepareAndItsResolutionShareOneBlockFreedWithTheLastOfThem) {
  BucketMemory memory;
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0, .memory = &memory});
  m.registerCursor("c");
  QueuedPrepare p = m.queuePrepare("k", "v", 1);
  const int64_t block_bytes = memory.itemBytes();
  ASSERT_GT(block_bytes, 0);
  auto alive = [&memory, block_bytes] { return memory.itemBytes() == block_bytes; };
  m.readItems("c");
  ExpelledItems prepare_only = m.extractItemsToExpel();  // the prepare's entry goes first
  EXPECT_EQ(prepare_only.count(), 1u);
  m.queueResolution(QueueOp::kCommit, p);
  p = {};
  prepare_only.release();
  EXPECT_TRUE(alive()) << "the queued commit still holds the block";
  m.readItems("c");
  {
    ExpelledItems commit = m.extractItemsToExpel();
    EXPECT_EQ(commit.count(), 1u);
    EXPECT_TRUE(alive());
  }
  EXPECT_EQ(memory.itemBytes(), 0) << "the one block is freed with the last of them";
}

TEST(CheckpointManager, AResolutionCountsTheItemItKeepsAlive) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("c");
  QueuedPrepare p = m.queuePrepare("key", std::string(1000, 'v'), 1);
  const size_t item_bytes = sizeof(CheckpointEntry) + p->estimatedSize();
  EXPECT_EQ(m.stats().memory_bytes, item_bytes);
  m.queueResolution(QueueOp::kAbort, p);
  EXPECT_EQ(m.stats().memory_bytes, 2 * item_bytes) << "an upper bound while both are present";
  m.readItems("c", 1);
  const ExpelledItems prepare = m.extractItemsToExpel();
  EXPECT_EQ(prepare.bytes(), item_bytes);
  EXPECT_EQ(m.stats().memory_bytes, item_bytes)
      << "the abort still holds the value: it is not reported as freed";
}

TEST(CheckpointManager, AResolutionThatOpensACheckpointIsQueuedThere) {
  // A checkpoint limit of one item makes the resolution open a checkpoint:
  // the one step of a queue that can throw (it allocates), which
  // appendLocked() therefore takes before the entry or the reservation
  // changes. The throw itself is not injected here.
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 1});
  QueuedPrepare p = m.queuePrepare("k", "v", 1);
  ASSERT_TRUE(p.resolvable());
  EXPECT_EQ(m.queueResolution(QueueOp::kCommit, p), 2u);
  EXPECT_FALSE(p.resolvable());
  EXPECT_EQ(m.stats().num_checkpoints, 2u);
}

TEST(CheckpointManager, AQueuedPrepareIsMoveOnlyAndItsReservationMovesWithIt) {
  static_assert(!std::is_copy_constructible_v<QueuedPrepare>);
  static_assert(!std::is_copy_assignable_v<QueuedPrepare>);
  CheckpointManager m;
  QueuedPrepare a = m.queuePrepare("k", "v", 1);
  ASSERT_TRUE(a.resolvable());
  QueuedPrepare b = std::move(a);
  EXPECT_TRUE(b.resolvable());
  EXPECT_FALSE(a.resolvable());  // NOLINT(bugprone-use-after-move): checking the moved-from
  EXPECT_THROW(m.queueResolution(QueueOp::kCommit, a), std::invalid_argument);
  EXPECT_EQ(m.queueResolution(QueueOp::kCommit, b), 2u);
}

TEST(CheckpointManager, AResolutionStaysUsedUpOnceExpelled) {
  // Expel releases the entry's reference to the item; whoever still holds
  // the prepare must not be able to queue the same entry again.
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("c");
  QueuedPrepare p = m.queuePrepare("k", "v", 1);
  m.queueResolution(QueueOp::kAbort, p);
  m.readItems("c");
  EXPECT_EQ(m.extractItemsToExpel().count(), 2u);
  EXPECT_FALSE(p.resolvable());
  EXPECT_THROW(m.queueResolution(QueueOp::kCommit, p), std::invalid_argument);
  EXPECT_EQ(m.highSeqno(), 2u);
}

// Entries keep the low 32 bits of their ordinal; counts and expel across the
// wrap still come out whole.
TEST(Checkpoint, OrdinalsCrossTheThirtyTwoBitWrap) {
  CheckpointManager items;  // makes the items the entries refer to
  constexpr uint64_t kStart = (uint64_t{1} << 32) - 5;
  Checkpoint c(1, kStart);
  std::vector<CheckpointEntry*> entries;
  for (int i = 0; i < 10; ++i) {
    auto* e = new CheckpointEntry();
    e->item = items.queue(QueueOp::kMutation, "k" + std::to_string(i), "v", 1);
    c.append(e);
    entries.push_back(e);
  }
  EXPECT_EQ(c.numItems(), 10u);
  EXPECT_EQ(c.ordinalOf(entries[0]), kStart + 1);
  EXPECT_EQ(c.ordinalOf(entries[9]), kStart + 10);
  const size_t entry_bytes = entries[0]->bytes();
  EntryChain chain = c.detachThrough(entries[6]);  // ordinals 2^32 - 4 .. 2^32 + 2
  EXPECT_EQ(chain.count, 7u);
  EXPECT_EQ(chain.bytes, 7 * entry_bytes);
  EXPECT_EQ(c.numExpelled(), kStart + 7);
  EXPECT_EQ(c.numItems(), 3u);
  EXPECT_EQ(c.ordinalOf(entries[9]), kStart + 10);
  freeChain(chain);
}

TEST(CheckpointManager, ExpelOfAnEmptyCheckpointDoesNothing) {
  CheckpointManager m;
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  m.registerCursor("c");
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  m.createCheckpoint();
  m.createCheckpoint();
  // Empty closed checkpoints are removed once the cursor passes them.
  ExpelledItems e = m.extractItemsToExpel();
  EXPECT_EQ(e.count(), 0u);
  EXPECT_EQ(e.checkpointsRemoved(), 2u);
  EXPECT_EQ(m.stats().num_checkpoints, 1u);
  queueN(m, 1);
  EXPECT_THAT(seqnosOf(m.readItems("c")), ElementsAre(1));
}

TEST(CheckpointManager, ExpelOfAFullyReadOpenCheckpointTakesEverything) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("c");
  const size_t bytes = queueN(m, 5);
  m.readItems("c");
  ExpelledItems e = m.extractItemsToExpel();
  EXPECT_THAT(seqnosOf(e), ElementsAre(1, 2, 3, 4, 5));
  EXPECT_EQ(e.bytes(), bytes);
  EXPECT_EQ(m.stats().num_items, 0u);
  EXPECT_EQ(m.stats().memory_bytes, 0u);
  EXPECT_EQ(m.stats().num_checkpoints, 1u);
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  // The open checkpoint keeps working after being emptied.
  queueN(m, 2);
  EXPECT_THAT(seqnosOf(m.readItems("c")), ElementsAre(6, 7));
}

TEST(CheckpointManager, FullyReadClosedCheckpointsAreRemovedWhole) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 3});
  m.registerCursor("c");
  queueN(m, 8);  // [1 2 3] [4 5 6] [7 8]
  m.readItems("c", 7);
  ExpelledItems e = m.extractItemsToExpel();
  EXPECT_EQ(e.checkpointsRemoved(), 2u);
  EXPECT_THAT(seqnosOf(e), ElementsAre(1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(m.stats().num_checkpoints, 1u);
  EXPECT_EQ(m.stats().num_items, 1u);
  EXPECT_EQ(m.stats().checkpoints_removed, 2u);
  EXPECT_THAT(seqnosOf(m.readItems("c")), ElementsAre(8));
}

TEST(CheckpointManager, ACursorInAnOldCheckpointHoldsItAndExpelStopsAtIt) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 3});
  m.registerCursor("slow");
  m.registerCursor("fast");
  queueN(m, 7);  // [1 2 3] [4 5 6] [7]
  m.readItems("fast");
  m.readItems("slow", 2);
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(1, 2));
  EXPECT_EQ(m.stats().num_checkpoints, 3u);
  EXPECT_THAT(seqnosOf(m.readItems("slow")), ElementsAreArray(range(3, 7)));
}

// The slowest cursor is found by checkpoint first, then by items passed in
// it: a cursor that passed more items of an older checkpoint is still behind
// one that passed fewer of a newer one.
TEST(CheckpointManager, TheSlowestCursorIsTheOneInTheOldestCheckpoint) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 3});
  m.registerCursor("ahead");
  m.registerCursor("behind");
  m.registerCursor("middle");
  queueN(m, 7);              // [1 2 3] [4 5 6] [7]
  m.readItems("ahead", 4);   // in [4 5 6], one passed there
  m.readItems("behind", 2);  // in [1 2 3], two passed there
  m.readItems("middle", 5);  // in [4 5 6], two passed there
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(1, 2));
  EXPECT_THAT(seqnosOf(m.readItems("behind", 2)), ElementsAre(3, 4));
  // Now all three are in [4 5 6]: the first checkpoint goes whole, and
  // "ahead" and "behind", at 4, bound the rest.
  ExpelledItems e = m.extractItemsToExpel();
  EXPECT_EQ(e.checkpointsRemoved(), 1u);
  EXPECT_THAT(seqnosOf(e), ElementsAre(3, 4));
  EXPECT_THAT(seqnosOf(m.readItems("ahead")), ElementsAre(5, 6, 7));
  EXPECT_THAT(seqnosOf(m.readItems("behind")), ElementsAre(5, 6, 7));
  EXPECT_THAT(seqnosOf(m.readItems("middle")), ElementsAre(6, 7));
}

// Removing cursors in any order — last registered, first registered, or one
// in between — leaves the others holding what they have not read.
TEST(CheckpointManager, CursorsCanBeRemovedInAnyOrder) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  for (const char* name : {"a", "b", "c", "d"}) m.registerCursor(name);
  queueN(m, 8);
  m.readItems("a", 2);
  m.readItems("b", 4);
  m.readItems("c", 6);
  m.readItems("d", 8);
  EXPECT_TRUE(m.removeCursor("c"));  // in between
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(1, 2));
  EXPECT_TRUE(m.removeCursor("a"));  // the first registered
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(3, 4));
  EXPECT_TRUE(m.removeCursor("d"));  // the last registered
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  EXPECT_THAT(seqnosOf(m.readItems("b")), ElementsAreArray(range(5, 8)));
  EXPECT_EQ(m.stats().num_cursors, 1u);
  EXPECT_TRUE(m.removeCursor("b"));
  EXPECT_EQ(m.extractItemsToExpel().count(), 4u);
  // A cursor registered again joins the (now empty) list.
  EXPECT_TRUE(m.registerCursor("a"));
  queueN(m, 1);
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  EXPECT_THAT(seqnosOf(m.readItems("a")), ElementsAre(9));
}

TEST(CheckpointManager, NoCursorMeansEverythingIsExpellable) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  queueN(m, 3);
  EXPECT_THAT(seqnosOf(m.extractItemsToExpel()), ElementsAre(1, 2, 3));
  // A cursor registered afterwards sees only what is still in memory.
  queueN(m, 1);
  m.registerCursor("late");
  EXPECT_THAT(seqnosOf(m.readItems("late")), ElementsAre(4));
}

TEST(CheckpointManager, RemovedCursorNoLongerHoldsItems) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("gone");
  m.registerCursor("stays");
  queueN(m, 4);
  m.readItems("stays");
  EXPECT_TRUE(m.extractItemsToExpel().empty());
  EXPECT_TRUE(m.removeCursor("gone"));
  EXPECT_FALSE(m.removeCursor("gone"));
  EXPECT_FALSE(m.hasCursor("gone"));
  EXPECT_EQ(m.extractItemsToExpel().count(), 4u);
}

TEST(CheckpointManager, CopyBaselineExpelsTheSameItems) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  m.registerCursor("c");
  const size_t bytes = queueN(m, 6);
  m.readItems("c", 4);
  ExpelledItems e = m.extractItemsToExpel(ExpelMethod::kCopy);
  EXPECT_THAT(seqnosOf(e), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(m.stats().num_items, 2u);
  EXPECT_EQ(m.stats().bytes_expelled + m.stats().memory_bytes, bytes);
  EXPECT_THAT(seqnosOf(m.readItems("c")), ElementsAre(5, 6));
}

// Readers, writers and expel at once: under TSan this checks the locking;
// the invariant checked is that every cursor still sees every seqno, in order.
TEST(CheckpointManager, ConcurrentReadersWritersAndExpel) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 50});
  constexpr Seqno kItems = 3000;
  m.registerCursor("r0");
  m.registerCursor("r1");
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    queueN(m, kItems);
    writing = false;
  });
  std::thread expeller([&] {
    while (writing) m.extractItemsToExpel();
  });
  std::vector<std::vector<Seqno>> seen(2);
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      const std::string name = "r" + std::to_string(r);
      while (seen[r].size() < kItems) {
        for (const auto& i : m.readItems(name, 17)) seen[r].push_back(i.seqno);
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  expeller.join();
  for (const auto& s : seen) EXPECT_THAT(s, ElementsAreArray(range(1, kItems)));
  m.extractItemsToExpel();
  EXPECT_EQ(m.stats().num_items, 0u);
  EXPECT_EQ(m.stats().items_expelled, kItems);
}

}  // namespace
}  // namespace syncwrite::vbucket

namespace syncwrite::vbucket {
namespace {

TEST(CheckpointManager, ResetEmptiesTheLogAndStartsEveryCursorAndSeqnoAgain) {
  BucketMemory memory;
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 2, .memory = &memory});
  ASSERT_TRUE(m.registerCursor("slow"));
  ASSERT_TRUE(m.registerCursor("fast"));
  queueN(m, 5);  // three checkpoints
  ASSERT_EQ(m.readItems("fast").size(), 5u);
  CheckpointManager::CursorHandle handle = m.cursorHandle("slow");
  ExpelledItems removed = m.reset();
  EXPECT_EQ(m.highSeqno(), 0u);
  EXPECT_EQ(seqnosOf(removed), range(1, 5));
  EXPECT_EQ(memory.checkpointBytes(), 0) << "the removed checkpoints are uncharged";
  removed.release();
  EXPECT_EQ(memory.itemBytes(), 0) << "their items are freed with them";
  // Both cursors read what is queued next, from seqno 1, and neither sees
  // what the reset removed; the handle still works.
  queueN(m, 2);
  EXPECT_THAT(seqnosOf(m.readItems("slow")), ElementsAre(1, 2));
  EXPECT_THAT(seqnosOf(m.readItems("fast")), ElementsAre(1, 2));
  EXPECT_EQ(m.passAll(handle, 10).items, 0u);
  EXPECT_EQ(m.stats().num_checkpoints, 1u);
}

}  // namespace
}  // namespace syncwrite::vbucket
