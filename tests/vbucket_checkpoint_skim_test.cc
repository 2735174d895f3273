// CheckpointManager::skimPrepares: a reader that needs only the prepares
// sees every prepare, in order, and passes exactly the records visitItems
// passes; runs without a prepare are passed whole (Checkpoint::noPrepareAfter).
// passAll: a reader that needs only whether it passed a prepare is told so.
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "vbucket/checkpoint_manager.h"

namespace syncwrite::vbucket {
namespace {

constexpr uint64_t kWrap = uint64_t{1} << 24;  // Checkpoint keeps 24 bits of an ordinal

TEST(CheckpointSkim, NoPrepareAfterIsExactWithin2To24AndNeverWrong) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    // The last prepare's real ordinal, up to 3 * 2^24 behind the tail.
    const uint64_t appended = (uint64_t{1} << 33) + rng() % (uint64_t{1} << 30);
    const uint64_t behind = rng() % (3 * kWrap);
    const uint64_t last_prepare = appended - behind;
    const uint64_t passed = appended - rng() % (4 * kWrap);
    const auto low = static_cast<uint32_t>(last_prepare & Checkpoint::kPrepareOrdinalMask);
    const bool none = Checkpoint::noPrepareAfter(appended, low, passed);
    // Never true when a prepare is after `passed`.
    if (last_prepare > passed) {
      ASSERT_FALSE(none) << appended << " " << last_prepare << " " << passed;
    }
    // Exact while the last prepare is fewer than 2^24 back.
    if (behind < kWrap) {
      ASSERT_EQ(none, last_prepare <= passed) << appended << " " << last_prepare << " " << passed;
    }
  }
  // The edges: a prepare exactly 2^24 back reads as one at the tail.
  EXPECT_FALSE(Checkpoint::noPrepareAfter(5 * kWrap, 0, 5 * kWrap - 1));
  EXPECT_TRUE(Checkpoint::noPrepareAfter(5 * kWrap + 3, 2, 5 * kWrap + 2));
  EXPECT_FALSE(Checkpoint::noPrepareAfter(5 * kWrap + 3, 3, 5 * kWrap + 2));
}

TEST(CheckpointSkim, ACheckpointTracksItsLastPrepareAcrossThe24BitWrap) {
  CheckpointManager items;  // makes the items the entries refer to
  constexpr uint64_t kStart = kWrap - 2;
  Checkpoint c(1, kStart);
  EXPECT_TRUE(c.noPrepareAfter(kStart));  // nothing appended yet
  auto append = [&](QueueOp op) {
    auto* e = new CheckpointEntry();
    e->op = op;
    e->item = items.queue(QueueOp::kMutation, "k", "v", 1);
    c.append(e);
  };
  append(QueueOp::kMutation);  // kWrap - 1
  EXPECT_TRUE(c.noPrepareAfter(kStart));
  append(QueueOp::kPrepare);  // kWrap: low bits 0
  append(QueueOp::kCommit);   // kWrap + 1
  EXPECT_FALSE(c.noPrepareAfter(kWrap - 1));
  EXPECT_TRUE(c.noPrepareAfter(kWrap));
  append(QueueOp::kPrepare);  // kWrap + 2
  EXPECT_FALSE(c.noPrepareAfter(kWrap + 1));
  EXPECT_TRUE(c.noPrepareAfter(kWrap + 2));
}

TEST(CheckpointSkim, ARunWithoutPreparesIsPassedWhole) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 0});
  ASSERT_TRUE(m.registerCursor("flusher"));
  for (int i = 0; i < 49; ++i) m.queue(QueueOp::kMutation, "k" + std::to_string(i), "v", 1);
  QueuedPrepare prepare = m.queuePrepare("p", "v", 1);  // seqno 50
  for (int i = 0; i < 50; ++i) m.queue(QueueOp::kMutation, "m" + std::to_string(i), "v", 1);
  std::vector<Seqno> prepares;
  auto note = [&](Seqno seqno) { prepares.push_back(seqno); };
  // Before the prepare, one record at a time.
  CheckpointManager::Skimmed read = m.skimPrepares("flusher", 1, note);
  EXPECT_EQ(read.items, 1u);
  EXPECT_EQ(read.last_seqno, 1u);
  // Up to the prepare one by one, then the 50 mutations after it in one jump.
  read = m.skimPrepares("flusher", 60, note);
  EXPECT_EQ(read.items, 99u);
  EXPECT_EQ(read.last_seqno, 100u);
  EXPECT_EQ(prepares, std::vector<Seqno>{50});
  EXPECT_EQ(m.itemsRemaining("flusher"), 0u);
  // Mutations and the prepare's commit: no prepare, one jump past max_items.
  for (int i = 0; i < 10; ++i) m.queue(QueueOp::kMutation, "n" + std::to_string(i), "v", 1);
  m.queueResolution(QueueOp::kCommit, prepare);
  read = m.skimPrepares("flusher", 1, note);
  EXPECT_EQ(read.items, 11u);
  EXPECT_EQ(read.last_seqno, 111u);
  EXPECT_EQ(prepares, std::vector<Seqno>{50});
  read = m.skimPrepares("flusher", 1, note);
  EXPECT_EQ(read.items, 0u);
  EXPECT_EQ(read.last_seqno, 0u);
  EXPECT_THROW(m.skimPrepares("nobody", 1, note), std::invalid_argument);
}

TEST(CheckpointSkim, AHandleReadsWhatTheNameReads) {
  CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 4});
  ASSERT_TRUE(m.registerCursor("by name"));
  ASSERT_TRUE(m.registerCursor("by handle"));
  const CheckpointManager::CursorHandle handle = m.cursorHandle("by handle");
  EXPECT_THROW(m.cursorHandle("nobody"), std::invalid_argument);
  std::vector<QueuedPrepare> prepares;
  std::vector<Seqno> by_name;
  std::vector<Seqno> by_handle;
  for (int i = 0; i < 30; ++i) {
    if (i % 3 == 0) {
      prepares.push_back(m.queuePrepare("p" + std::to_string(i), "v", 1));
    } else {
      m.queue(QueueOp::kMutation, "k" + std::to_string(i), "v", 1);
    }
    if (i % 7 == 6) {
      const auto a = m.skimPrepares("by name", 2, [&](Seqno s) { by_name.push_back(s); });
      const auto b = m.skimPrepares(handle, 2, [&](Seqno s) { by_handle.push_back(s); });
      EXPECT_EQ(a.items, b.items);
      EXPECT_EQ(a.last_seqno, b.last_seqno);
    }
  }
  m.skimPrepares("by name", SIZE_MAX, [&](Seqno s) { by_name.push_back(s); });
  m.skimPrepares(handle, SIZE_MAX, [&](Seqno s) { by_handle.push_back(s); });
  EXPECT_EQ(by_name, by_handle);
  EXPECT_EQ(by_handle.size(), prepares.size());
  EXPECT_EQ(m.itemsRemaining("by handle"), 0u);
  // A handle is its manager's: an empty one, or another's, is refused.
  CheckpointManager other;
  ASSERT_TRUE(other.registerCursor("by handle"));
  auto none = [](Seqno) { ADD_FAILURE() << "nothing may be read"; };
  EXPECT_THROW(other.skimPrepares(handle, 1, none), std::invalid_argument);
  EXPECT_THROW(m.skimPrepares(CheckpointManager::CursorHandle(), 1, none), std::invalid_argument);
}

// One random write to `m` for a step that drew `what` (0..9): a mutation
// below `mutations`, a prepare below 6, below 7 the commit or abort of the
// newest open prepare. False when `what` asks for none of them (or for a
// resolution with none open): the caller reads or expels instead.
bool randomWrite(CheckpointManager& m, std::mt19937& rng, unsigned what, unsigned mutations,
                 int step, std::vector<QueuedPrepare>& open) {
  if (what < mutations) {
    m.queue(QueueOp::kMutation, "k" + std::to_string(step), "v", 1);
  } else if (what < 6) {
    open.push_back(m.queuePrepare("p" + std::to_string(step), "v", 1));
  } else if (what < 7 && !open.empty()) {
    m.queueResolution(rng() % 2 ? QueueOp::kCommit : QueueOp::kAbort, open.back());
    open.pop_back();
  } else {
    return false;
  }
  return true;
}

// Random logs (mutations, prepares, commits, aborts over small checkpoints,
// with expel between reads): a skimming cursor and a visiting one read in
// random batches and end in the same place, having seen the same prepares.
TEST(CheckpointSkim, SeesWhatVisitItemsSeesOverRandomLogs) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 1 + rng() % 8});
    ASSERT_TRUE(m.registerCursor("skim"));
    ASSERT_TRUE(m.registerCursor("visit"));
    std::vector<QueuedPrepare> open;
    std::vector<Seqno> skimmed;
    std::vector<Seqno> visited;
    uint64_t skim_items = 0;
    uint64_t visit_items = 0;
    Seqno skim_last = 0;
    for (int step = 0; step < 400; ++step) {
      const unsigned what = rng() % 10;
      if (randomWrite(m, rng, what, 4, step, open)) continue;
      if (what < 8) {
        const CheckpointManager::Skimmed read =
            m.skimPrepares("skim", 1 + rng() % 5, [&](Seqno s) { skimmed.push_back(s); });
        skim_items += read.items;
        if (read.items != 0) {
          // Every entry takes the next seqno, so the cursor's position is
          // the high seqno less what it has not read.
          ASSERT_EQ(read.last_seqno, m.highSeqno() - m.itemsRemaining("skim")) << "round " << round;
          skim_last = read.last_seqno;
        }
      } else if (what < 9) {
        visit_items += m.visitItems("visit", 1 + rng() % 5, [&](QueueOp op, Seqno s) {
          if (op == QueueOp::kPrepare) visited.push_back(s);
        });
      } else if (what < 10 && rng() % 2) {
        m.extractItemsToExpel();
      } else {
        m.createCheckpoint();
      }
    }
    const CheckpointManager::Skimmed rest =
        m.skimPrepares("skim", SIZE_MAX, [&](Seqno s) { skimmed.push_back(s); });
    skim_items += rest.items;
    if (rest.items != 0) skim_last = rest.last_seqno;
    visit_items += m.visitItems("visit", SIZE_MAX, [&](QueueOp op, Seqno s) {
      if (op == QueueOp::kPrepare) visited.push_back(s);
    });
    EXPECT_EQ(skimmed, visited) << "round " << round;
    EXPECT_EQ(skim_items, visit_items) << "round " << round;
    EXPECT_EQ(skim_last, m.highSeqno()) << "round " << round;
    EXPECT_EQ(m.itemsRemaining("skim"), 0u);
  }
}

// passAll() over random logs: a passing cursor jumps a checkpoint at a time;
// a visiting cursor then visits exactly as many records. Both end at the
// same seqno, and the pass says "prepare" exactly when the visit met one
// (exact here: no log is 2^24 appends long).
TEST(CheckpointSkim, PassAllReportsAPrepareExactlyWhenOneWasPassed) {
  std::mt19937 rng(23);
  int with_prepare = 0;
  int without = 0;
  for (int round = 0; round < 40; ++round) {
    CheckpointManager m(CheckpointOptions{.max_items_per_checkpoint = 1 + rng() % 8});
    ASSERT_TRUE(m.registerCursor("pass"));
    ASSERT_TRUE(m.registerCursor("visit"));
    const CheckpointManager::CursorHandle pass = m.cursorHandle("pass");
    std::vector<QueuedPrepare> open;
    for (int step = 0; step < 400; ++step) {
      const unsigned what = rng() % 10;
      if (randomWrite(m, rng, what, 5, step, open)) continue;
      if (what < 9) {
        const CheckpointManager::Skimmed passed = m.passAll(pass, 1 + rng() % 5);
        if (passed.items == 0) continue;
        bool saw_prepare = false;
        Seqno last = 0;
        ASSERT_EQ(m.visitItems("visit", passed.items,
                               [&](QueueOp op, Seqno s) {
                                 saw_prepare |= op == QueueOp::kPrepare;
                                 last = s;
                               }),
                  passed.items)
            << "round " << round;
        EXPECT_EQ(passed.last_seqno, last) << "round " << round;
        EXPECT_EQ(passed.prepare, saw_prepare) << "round " << round << " step " << step;
        ++(saw_prepare ? with_prepare : without);
      } else if (rng() % 2) {
        m.extractItemsToExpel();
      } else {
        m.createCheckpoint();
      }
    }
  }
  EXPECT_GT(with_prepare, 100);
  EXPECT_GT(without, 100);
  CheckpointManager other;
  ASSERT_TRUE(other.registerCursor("pass"));
  EXPECT_THROW(other.passAll(CheckpointManager::CursorHandle(), 1), std::invalid_argument);
}

}  // namespace
}  // namespace syncwrite::vbucket
