// base::Fifo: first in, first out across wrap-around and growth; steady
// traffic reuses its room (no allocation); an emptied Fifo with more than
// kKeep elements' room frees it; move-only elements work.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/fifo.h"

namespace syncwrite::base {
namespace {

TEST(Fifo, KeepsOrderAcrossWrapAroundAndGrowth) {
  Fifo<int> fifo;
  int next_in = 0;
  int next_out = 0;
  // Uneven pushes and pops, so the ring wraps at every capacity it grows to.
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 3 + round % 5; ++i) fifo.push_back(next_in++);
    for (int i = 0; i < 2 + round % 3 && !fifo.empty(); ++i) {
      ASSERT_EQ(fifo.front(), next_out++);
      fifo.pop_front();
    }
    ASSERT_EQ(fifo.size(), static_cast<size_t>(next_in - next_out));
    if (!fifo.empty()) {
      EXPECT_EQ(fifo.back(), next_in - 1);
      EXPECT_EQ(fifo[0], next_out);
    }
  }
  int expected = next_out;
  for (int value : fifo) EXPECT_EQ(value, expected++);
  EXPECT_EQ(expected, next_in);
}

TEST(Fifo, SteadyTrafficReusesItsRoom) {
  Fifo<int> fifo;
  for (int i = 0; i < 10; ++i) fifo.push_back(i);
  const size_t room = fifo.capacity();
  ASSERT_GE(room, 10u);
  // Ten in flight for a long time, passing through: the room stays.
  for (int i = 10; i < 100'000; ++i) {
    fifo.pop_front();
    fifo.push_back(i);
  }
  EXPECT_EQ(fifo.capacity(), room);
  EXPECT_EQ(fifo.front(), 99'990);
}

TEST(Fifo, AnEmptiedFifoKeepsAtMostKKeepElementsRoom) {
  Fifo<int, 8> small;
  for (int i = 0; i < 8; ++i) small.push_back(i);
  while (!small.empty()) small.pop_front();
  EXPECT_EQ(small.capacity(), 8u) << "room for kKeep is kept";

  Fifo<int, 8> burst;
  for (int i = 0; i < 100; ++i) burst.push_back(i);
  ASSERT_GE(burst.capacity(), 100u);
  for (int i = 0; i < 99; ++i) burst.pop_front();
  EXPECT_GE(burst.capacity(), 100u) << "not empty yet";
  burst.pop_front();
  EXPECT_EQ(burst.capacity(), 0u) << "emptied with more than kKeep: freed";

  for (int i = 0; i < 100; ++i) burst.push_back(i);
  burst.clear();
  EXPECT_TRUE(burst.empty());
  EXPECT_EQ(burst.capacity(), 0u);
  burst.push_back(7);
  EXPECT_EQ(burst.front(), 7);
}

TEST(Fifo, HoldsMoveOnlyElements) {
  Fifo<std::unique_ptr<std::string>> fifo;
  for (int i = 0; i < 50; ++i) fifo.emplace_back(std::make_unique<std::string>(std::to_string(i)));
  for (int i = 0; i < 50; ++i) {
    ASSERT_NE(fifo.front(), nullptr);
    EXPECT_EQ(*fifo.front(), std::to_string(i));
    fifo.pop_front();
  }
  EXPECT_TRUE(fifo.empty());
}

}  // namespace
}  // namespace syncwrite::base
