// base::SpareBlock and SpareBlockAllocator: the last freed block of the
// element type comes back at the next allocation of its size; other sizes and
// rebound types go to the heap; a deque used as a queue keeps at most one
// block, or as many as it is told, and then bursts allocate nothing.
// (tests/idle_memory_test.cc counts what this saves a monitor.)
#include <algorithm>
#include <deque>
#include <memory>

#include <gtest/gtest.h>

#include "base/spare_block.h"

namespace syncwrite::base {
namespace {

TEST(SpareBlock, GivesBackItsBlockOnlyForTheSameSize) {
  SpareBlock spare;
  SpareBlockAllocator<int> alloc(spare);
  int* a = alloc.allocate(128);
  alloc.deallocate(a, 128);
  EXPECT_EQ(spare.heldBytes(), 128 * sizeof(int));
  EXPECT_EQ(spare.take(64 * sizeof(int)), nullptr) << "another size";
  int* b = alloc.allocate(128);
  EXPECT_EQ(b, a) << "the kept block";
  EXPECT_EQ(spare.heldBytes(), 0u);
  alloc.deallocate(b, 128);
}

TEST(SpareBlock, KeepsOneBlockAndFreesTheRest) {
  SpareBlock spare;
  SpareBlockAllocator<int> alloc(spare);
  int* a = alloc.allocate(16);
  int* b = alloc.allocate(16);
  alloc.deallocate(a, 16);
  alloc.deallocate(b, 16);  // one is kept already: b goes to the heap
  EXPECT_EQ(spare.heldBytes(), 16 * sizeof(int));
  EXPECT_EQ(alloc.allocate(16), a);
  alloc.deallocate(a, 16);
}

TEST(SpareBlock, KeepsAsManyBlocksAsToldLastFreedFirst) {
  SpareBlock spare(3);
  SpareBlockAllocator<int> alloc(spare);
  int* blocks[4];
  for (int*& b : blocks) b = alloc.allocate(16);
  for (int* b : blocks) alloc.deallocate(b, 16);  // the fourth goes to the heap
  EXPECT_EQ(spare.heldBytes(), size_t{3} * 16 * sizeof(int));
  EXPECT_EQ(spare.take(8 * sizeof(int)), nullptr) << "another size";
  EXPECT_EQ(alloc.allocate(16), blocks[2]);
  EXPECT_EQ(alloc.allocate(16), blocks[1]);
  EXPECT_EQ(alloc.allocate(16), blocks[0]);
  EXPECT_EQ(spare.heldBytes(), 0u);
  for (int i = 0; i < 3; ++i) alloc.deallocate(blocks[i], 16);
  // The destructor frees the three it keeps (ASan's leak check).
}

TEST(SpareBlock, AReboundAllocatorNeverKeeps) {
  SpareBlock spare;
  SpareBlockAllocator<int> alloc(spare);
  SpareBlockAllocator<int*, int> map_alloc(alloc);
  EXPECT_TRUE((map_alloc == SpareBlockAllocator<int*, int>(spare)));
  int** map = map_alloc.allocate(8);
  map_alloc.deallocate(map, 8);
  EXPECT_EQ(spare.heldBytes(), 0u) << "a map's block would take the elements' room";
}

TEST(SpareBlock, ADequeUsedAsAQueueHoldsAtMostOneSpareBlock) {
  SpareBlock spare;
  std::deque<int, SpareBlockAllocator<int>> queue{SpareBlockAllocator<int>(spare)};
  int next_out = 0;
  size_t most_held = 0;
  for (int i = 0; i < 10000; ++i) {
    queue.push_back(i);
    if (queue.size() > 20) {
      ASSERT_EQ(queue.front(), next_out++);
      queue.pop_front();
    }
    most_held = std::max(most_held, spare.heldBytes());
  }
  EXPECT_EQ(most_held, 512u) << "one block of libstdc++'s 512 bytes, never more";
  queue.clear();
  queue.shrink_to_fit();
}

// A burst crosses several blocks in and then out (a connection's answer
// slots: docs/memory.md): with as many spares as the burst's blocks,
// every block after the first burst is one it freed.
TEST(SpareBlock, BurstsOfKBlocksComeBackFromKSpares) {
  constexpr int kBurst = 3;
  for (const uint16_t spares : {uint16_t{1}, uint16_t{kBurst}}) {
    SpareBlock spare(spares);
    SpareBlockAllocator<int> alloc(spare);
    int from_heap = 0;
    for (int round = 0; round < 100; ++round) {
      int* blocks[kBurst];
      for (int*& b : blocks) {
        const size_t held = spare.heldBytes();
        b = alloc.allocate(128);
        if (spare.heldBytes() == held) ++from_heap;
      }
      for (int* b : blocks) alloc.deallocate(b, 128);
    }
    if (spares == kBurst) {
      EXPECT_EQ(from_heap, kBurst) << "only the first burst's";
    } else {
      EXPECT_EQ(from_heap, kBurst + 99 * (kBurst - 1)) << "all but one block of each later burst";
    }
    EXPECT_EQ(spare.heldBytes(), size_t{spares} * 128 * sizeof(int));
  }
}

}  // namespace
}  // namespace syncwrite::base
