// FailoverTable: the history entries a vbucket keeps and the rollback point
// it names for a DCP client, as kv_engine's failover-table.cc decides it.
#include <gtest/gtest.h>

#include "vbucket/failover_table.h"

namespace syncwrite::vbucket {
namespace {

TEST(FailoverTableTest, NewestFirstDroppingWhatIsAboveANewEntryAndCapped) {
  FailoverTable table;
  EXPECT_EQ(table.latestUuid(), 0u);
  table.createEntry(11, 0);
  table.createEntry(22, 100);
  table.createEntry(33, 200);
  EXPECT_EQ(table.entries(), (std::vector<FailoverEntry>{{33, 200}, {22, 100}, {11, 0}}));
  // Back to seqno 150: the history above it (33 from 200) was a branch.
  table.createEntry(44, 150);
  EXPECT_EQ(table.entries(), (std::vector<FailoverEntry>{{44, 150}, {22, 100}, {11, 0}}));
  EXPECT_EQ(table.latestUuid(), 44u);
  for (uint64_t i = 0; i < 2 * FailoverTable::kMaxEntries; ++i) table.createEntry(100 + i, 150);
  EXPECT_EQ(table.entries().size(), FailoverTable::kMaxEntries);
  table.replace({{7, 3}, {6, 0}});
  EXPECT_EQ(table.entries(), (std::vector<FailoverEntry>{{7, 3}, {6, 0}}));
}

TEST(FailoverTableTest, NamesTheSeqnoAClientMustRollBackTo) {
  FailoverTable table;
  table.createEntry(11, 0);
  table.createEntry(22, 100);  // this vbucket took over at 100; it is at 180
  constexpr Seqno kHigh = 180;
  // From 0 nothing can disagree; a uuid this table never had: back to 0.
  EXPECT_FALSE(table.needsRollback(0, 99, 0, 0, kHigh));
  auto unknown = table.needsRollback(50, 99, 50, 50, kHigh);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->seqno, 0u);
  EXPECT_NE(unknown->reason.find("99 is not in the failover table"), std::string::npos);
  // The old history is shared up to 100.
  EXPECT_FALSE(table.needsRollback(100, 11, 100, 100, kHigh));
  auto ahead = table.needsRollback(120, 11, 120, 120, kHigh);
  ASSERT_TRUE(ahead);
  EXPECT_EQ(ahead->seqno, 100u);
  // Inside a snapshot [90, 130] it holds part of: back to the snapshot's
  // start, below the shared point.
  auto partial = table.needsRollback(95, 11, 90, 130, kHigh);
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->seqno, 90u);
  // At its snapshot's start it holds none of it: no rollback at 95.
  EXPECT_FALSE(table.needsRollback(95, 11, 95, 130, kHigh));
  // The newest history: shared up to this vbucket's high seqno.
  EXPECT_FALSE(table.needsRollback(180, 22, 180, 180, kHigh));
  auto beyond = table.needsRollback(190, 22, 190, 190, kHigh);
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->seqno, kHigh);
}

}  // namespace
}  // namespace syncwrite::vbucket
