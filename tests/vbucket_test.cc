// VBucket: state and its change notification, the hash table of committed
// items, and the seqno generator the durability layer relies on.
#include <atomic>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vbucket/bucket_memory.h"
#include "vbucket/checkpoint_manager.h"
#include "vbucket/hash_table.h"
#include "vbucket/vbucket.h"

namespace syncwrite::vbucket {
namespace {

using testing::ElementsAre;

struct Change {
  Vbid vb;
  VBucketState from;
  VBucketState to;
  bool operator==(const Change&) const = default;
};

TEST(VBucketState, Names) {
  EXPECT_EQ(toString(VBucketState::kActive), "active");
  EXPECT_EQ(toString(VBucketState::kReplica), "replica");
  EXPECT_EQ(toString(VBucketState::kPending), "pending");
  EXPECT_EQ(toString(VBucketState::kDead), "dead");
}

TEST(StateFilter, ContainsExactlyItsStates) {
  constexpr StateFilter f{VBucketState::kActive, VBucketState::kPending};
  static_assert(f.contains(VBucketState::kActive));
  static_assert(!f.contains(VBucketState::kReplica));
  EXPECT_TRUE(f.contains(VBucketState::kPending));
  EXPECT_FALSE(f.contains(VBucketState::kDead));
  EXPECT_TRUE(StateFilter().empty());
  EXPECT_TRUE(StateFilter::all().contains(VBucketState::kDead));
}

TEST(VBucket, StartsInItsInitialStateWithNothingQueued) {
  VBucket vb(12, VBucketState::kReplica);
  EXPECT_EQ(vb.id(), 12);
  EXPECT_EQ(vb.state(), VBucketState::kReplica);
  EXPECT_EQ(vb.highSeqno(), 0u);
  EXPECT_EQ(vb.hashTable().size(), 0u);
}

TEST(VBucket, StateChangeNotifiesListenersWithOldAndNewState) {
  VBucket vb(3, VBucketState::kReplica);
  std::vector<Change> seen;
  std::vector<VBucketState> visible;
  vb.addStateListener([&](VBucket& v, VBucketState from, VBucketState to) {
    seen.push_back({v.id(), from, to});
    visible.push_back(v.state());  // the new state is already visible
  });
  EXPECT_TRUE(vb.setState(VBucketState::kActive));
  EXPECT_FALSE(vb.setState(VBucketState::kActive));  // no change, no notification
  EXPECT_TRUE(vb.setState(VBucketState::kDead));
  EXPECT_THAT(seen, ElementsAre(Change{3, VBucketState::kReplica, VBucketState::kActive},
                                Change{3, VBucketState::kActive, VBucketState::kDead}));
  EXPECT_THAT(visible, ElementsAre(VBucketState::kActive, VBucketState::kDead));
}

TEST(VBucket, RemovedListenerIsNotCalled) {
  VBucket vb(0, VBucketState::kActive);
  int a = 0, b = 0;
  auto id_a = vb.addStateListener([&](VBucket&, VBucketState, VBucketState) { ++a; });
  vb.addStateListener([&](VBucket&, VBucketState, VBucketState) { ++b; });
  vb.setState(VBucketState::kReplica);
  EXPECT_TRUE(vb.removeStateListener(id_a));
  EXPECT_FALSE(vb.removeStateListener(id_a));
  vb.setState(VBucketState::kActive);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
}

TEST(VBucket, ListenerMayQueueItemsAndRemoveItself) {
  VBucket vb(0, VBucketState::kReplica);
  VBucket::ListenerId self = 0;
  self = vb.addStateListener([&](VBucket& v, VBucketState, VBucketState to) {
    if (to == VBucketState::kActive) {
      v.hashTable().setCommitted(v.checkpointManager().queue(QueueOp::kMutation, "k", "v", 1));
    }
    EXPECT_TRUE(v.removeStateListener(self));
  });
  vb.setState(VBucketState::kActive);
  EXPECT_EQ(vb.highSeqno(), 1u);
  ASSERT_NE(vb.hashTable().find("k"), nullptr);
  vb.setState(VBucketState::kDead);
  EXPECT_EQ(vb.highSeqno(), 1u);  // removed: not called again
}

TEST(VBucket, SetStateFromItsOwnListenerThrowsAndTheChangeStands) {
  VBucket vb(0, VBucketState::kReplica);
  vb.addStateListener(
      [](VBucket& v, VBucketState, VBucketState) { v.setState(VBucketState::kDead); });
  EXPECT_THROW(vb.setState(VBucketState::kActive), std::logic_error);
  EXPECT_EQ(vb.state(), VBucketState::kActive);
}

TEST(VBucket, ConcurrentStateChangesAreDeliveredOneAtATimeAndInOrder) {
  VBucket vb(0, VBucketState::kDead);
  std::atomic<int> inside{0};
  std::vector<Change> seen;  // written only inside listeners, which never overlap
  vb.addStateListener([&](VBucket& v, VBucketState from, VBucketState to) {
    EXPECT_EQ(inside.fetch_add(1), 0);
    seen.push_back({v.id(), from, to});
    inside.fetch_sub(1);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        vb.setState(static_cast<VBucketState>((t + i) % 4));
      }
    });
  }
  for (auto& t : threads) t.join();
  // Each notification starts from the state the previous one ended in.
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i].from, seen[i - 1].to);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().to, vb.state());
}

TEST(VBucket, RemoveStateListenerWaitsForARunningNotification) {
  VBucket vb(0, VBucketState::kReplica);
  std::atomic<bool> entered{false}, release{false};
  auto captured = std::make_unique<int>(0);
  auto id = vb.addStateListener([&, p = captured.get()](VBucket&, VBucketState, VBucketState) {
    entered = true;
    while (!release) std::this_thread::yield();
    ++*p;
  });
  std::thread changer([&] { vb.setState(VBucketState::kActive); });
  while (!entered) std::this_thread::yield();
  std::atomic<bool> removed{false};
  std::thread remover([&] {
    vb.removeStateListener(id);
    removed = true;
  });
  // The remover cannot return while the listener runs; let the listener end.
  EXPECT_FALSE(removed.load());
  release = true;
  remover.join();
  changer.join();
  EXPECT_TRUE(removed.load());
  EXPECT_EQ(*captured, 1);
  captured.reset();  // safe: the listener is gone and not running
}

TEST(HashTable, CommittedItemIsVisibleWithValueCasAndSeqno) {
  VBucket vb(0, VBucketState::kActive);
  EXPECT_EQ(vb.hashTable().find("k"), nullptr);
  auto prepare = vb.checkpointManager().queue(QueueOp::kPrepare, "k", "v1", 42);
  EXPECT_EQ(prepare->seqno, 1u);
  EXPECT_EQ(vb.hashTable().find("k"), nullptr) << "a prepare is not committed state";
  auto commit = vb.checkpointManager().queue(QueueOp::kCommit, "k", "v1", 42);
  EXPECT_TRUE(vb.hashTable().setCommitted(commit));
  QueuedItem found = vb.hashTable().find("k");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->value(), "v1");
  EXPECT_EQ(found->cas, 42u);
  EXPECT_EQ(found->seqno, 2u);
  EXPECT_EQ(found.get(), commit.get()) << "shared with the checkpoint, not copied";
}

TEST(HashTable, OlderCommitDoesNotOverwriteNewer) {
  VBucket vb(0, VBucketState::kActive);
  auto older = vb.checkpointManager().queue(QueueOp::kMutation, "k", "old", 1);
  auto newer = vb.checkpointManager().queue(QueueOp::kMutation, "k", "new", 2);
  EXPECT_TRUE(vb.hashTable().setCommitted(newer));
  EXPECT_FALSE(vb.hashTable().setCommitted(older));
  EXPECT_EQ(vb.hashTable().find("k")->value(), "new");
  EXPECT_TRUE(vb.hashTable().erase("k"));
  EXPECT_FALSE(vb.hashTable().erase("k"));
  EXPECT_EQ(vb.hashTable().size(), 0u);
}

// The prefetch hints only warm the cache: every key, present or not, and an
// empty table, leave the table, its items and their reference counts as they
// were.
TEST(HashTable, PrefetchHintsChangeNothing) {
  HashTable table;
  table.prefetchTable();
  table.prefetchSlot("absent");
  table.prefetchItem("absent");  // never allocated
  CheckpointManager log;
  QueuedItem item = log.queue(QueueOp::kMutation, "k", "v", 1);
  ASSERT_TRUE(table.setCommitted(item));
  const uint32_t refs = item->refs.load();
  for (std::string_view key : {"k", "absent", ""}) {
    table.prefetchTable();
    table.prefetchSlot(key);
    table.prefetchItem(key);
  }
  EXPECT_EQ(item->refs.load(), refs);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.find("k"), item);
  EXPECT_EQ(table.find("absent"), nullptr);
}

// A hint takes the table's lock like a lookup: one racing a growing table
// reads no slot array while it is replaced (run under TSan and ASan).
TEST(HashTable, PrefetchRacesWithGrowth) {
  HashTable table;
  CheckpointManager log;
  constexpr int kKeys = 5000;
  std::atomic<bool> done{false};
  std::thread prefetcher([&] {
    for (int i = 0; !done.load(); i = (i + 1) % kKeys) {
      const std::string key = "key-" + std::to_string(i);
      table.prefetchSlot(key);
      table.prefetchItem(key);
    }
  });
  int inserted = 0;
  for (int i = 0; i < kKeys; ++i) {
    inserted +=
        table.setCommitted(log.queue(QueueOp::kMutation, "key-" + std::to_string(i), "v", 1));
  }
  done = true;
  prefetcher.join();
  EXPECT_EQ(inserted, kKeys);
  EXPECT_EQ(table.size(), static_cast<size_t>(kKeys));
}

// The table keeps no copy of a key: a slot reads it through its item. So a
// replaced item must take its slot's key with it, long keys included, over
// the rehashes of a growing table, and the index is charged a slot per key.
TEST(HashTable, KeysLiveInTheItemsAcrossReplacementsAndRehashes) {
  BucketMemory memory;
  HashTable table(&memory);
  CheckpointManager log;
  auto key = [](int i) { return "a-key-longer-than-fifteen-bytes-" + std::to_string(i); };
  constexpr int kKeys = 2000;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kKeys; ++i) {
      // Each round replaces every item; the old ones (and their keys) are
      // freed once the log lets go of them.
      ASSERT_TRUE(table.setCommitted(
          log.queue(QueueOp::kMutation, key(i), "v" + std::to_string(round), 1)));
    }
    log.createCheckpoint();
    log.extractItemsToExpel();
  }
  EXPECT_EQ(table.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(memory.indexBytes(), static_cast<int64_t>(kKeys * HashTable::slotBytes(key(0))));
  EXPECT_EQ(HashTable::slotBytes(key(0)), sizeof(void*)) << "a slot is the item's pointer";
  for (int i = 0; i < kKeys; ++i) {
    QueuedItem found = table.find(key(i));
    ASSERT_NE(found, nullptr) << key(i);
    EXPECT_EQ(found->key(), key(i));
    EXPECT_EQ(found->value(), "v2");
  }
  std::vector<std::string> keys = table.keys();
  EXPECT_EQ(keys.size(), static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; i += 2) ASSERT_TRUE(table.erase(key(i)));
  EXPECT_EQ(table.find(key(0)), nullptr);
  EXPECT_NE(table.find(key(1)), nullptr);
  EXPECT_EQ(memory.indexBytes(), static_cast<int64_t>(kKeys / 2 * HashTable::slotBytes("")));
}

}  // namespace
}  // namespace syncwrite::vbucket
