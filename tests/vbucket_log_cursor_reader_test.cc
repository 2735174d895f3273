// LogCursorReader: a reader's cursor on every vbucket, read where marked —
// the prepares it reports, how far it read, and a cursor name that is taken.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "vbucket/log_cursor_reader.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::vbucket {
namespace {

TEST(LogCursorReader, ReportsThePreparesAndHowFarItReadPerMarkedVbucket) {
  VBucketMap map(4, VBucketState::kActive);
  LogCursorReader reader(map, "reader");
  CheckpointManager& log1 = map.at(Vbid{1}).checkpointManager();
  CheckpointManager& log3 = map.at(Vbid{3}).checkpointManager();
  for (int i = 0; i < 5; ++i) log1.queue(QueueOp::kMutation, "k" + std::to_string(i), "v", 1);
  QueuedPrepare prepare = log3.queuePrepare("p", "v", 1);  // seqno 1
  log3.queue(QueueOp::kMutation, "m", "v", 1);             // seqno 2
  EXPECT_TRUE(reader.markDirty(Vbid{1}));                  // the first mark since the last read
  EXPECT_FALSE(reader.markDirty(Vbid{3}));
  std::vector<std::pair<Vbid, Seqno>> prepares;
  std::vector<std::pair<Vbid, std::pair<size_t, Seqno>>> done;
  const bool more = reader.readDirty(
      2, [&](Vbid vbid, Seqno seqno) { prepares.emplace_back(vbid, seqno); },
      [&](Vbid vbid, size_t count, Seqno last) {
        done.push_back({vbid, {count, last}});
      });
  // vbucket 1 holds no prepare: its five mutations are passed in one step,
  // which is a batch or more, so it stays marked.
  EXPECT_TRUE(more);
  EXPECT_EQ(prepares, (std::vector<std::pair<Vbid, Seqno>>{{Vbid{3}, 1}}));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], (std::pair<Vbid, std::pair<size_t, Seqno>>{Vbid{1}, {5, 5}}));
  EXPECT_EQ(done[1], (std::pair<Vbid, std::pair<size_t, Seqno>>{Vbid{3}, {2, 2}}));
  EXPECT_EQ(reader.itemsQueued(), 0u);
  done.clear();
  EXPECT_FALSE(reader.readDirty(
      2, [&](Vbid, Seqno) { ADD_FAILURE() << "no prepare is left"; },
      [&](Vbid vbid, size_t count, Seqno last) {
        done.push_back({vbid, {count, last}});
      }));
  EXPECT_TRUE(done.empty());
}

TEST(LogCursorReader, ACursorNameTakenOnAnyVbucketIsRefusedAndNothingIsRegistered) {
  VBucketMap map(4, VBucketState::kActive);
  ASSERT_TRUE(map.at(Vbid{2}).checkpointManager().registerCursor("taken"));
  EXPECT_THROW(LogCursorReader(map, "taken"), std::invalid_argument);
  // Vbuckets 0 and 1 were registered before the clash, and are unregistered.
  EXPECT_FALSE(map.at(Vbid{0}).checkpointManager().hasCursor("taken"));
  EXPECT_FALSE(map.at(Vbid{1}).checkpointManager().hasCursor("taken"));
  EXPECT_TRUE(map.at(Vbid{2}).checkpointManager().hasCursor("taken"));
  {
    LogCursorReader first(map, "reader");
    EXPECT_THROW(LogCursorReader(map, "reader"), std::invalid_argument);
    EXPECT_TRUE(map.at(Vbid{3}).checkpointManager().hasCursor("reader"));  // still the first's
  }
  EXPECT_FALSE(map.at(Vbid{3}).checkpointManager().hasCursor("reader"));
}

}  // namespace
}  // namespace syncwrite::vbucket
