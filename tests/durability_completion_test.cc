// durability::Completion: a small trivially copyable callable lives in place,
// any other on the heap (freed once, ASan checks), both move by their bytes
// and leave the source empty, and a call reaches the callable with the
// resolution.
#include "durability/completion.h"

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "durability/sync_write.h"

namespace syncwrite::durability {
namespace {

struct InPlace {
  int* calls;
  Seqno* seen;
  void operator()(const Resolution& r) const {
    ++*calls;
    *seen = r.prepare_seqno;
  }
};
static_assert(std::is_trivially_copyable_v<InPlace> && sizeof(InPlace) == 16);

Resolution resolutionOf(Seqno seqno) {
  Resolution r;
  r.prepare_seqno = seqno;
  return r;
}

TEST(Completion, EmptyByDefaultAndFromNullptr) {
  Completion a;
  Completion b = nullptr;
  EXPECT_FALSE(a);
  EXPECT_FALSE(b);
  Completion c = [](const Resolution&) {};
  EXPECT_TRUE(c);
  c = nullptr;
  EXPECT_FALSE(c);
}

TEST(Completion, InPlaceCallableIsCalledAndMovedWithItsState) {
  int calls = 0;
  Seqno seen = 0;
  Completion a = InPlace{&calls, &seen};
  Completion b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty, by contract
  ASSERT_TRUE(b);
  b(resolutionOf(7));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, 7u);
}

TEST(Completion, HeapCallableKeepsItsCaptureAcrossMovesAndIsDestroyedOnce) {
  auto token = std::make_shared<int>(0);
  std::string captured(100, 'x');  // too big to live in place
  {
    Completion a = [token, captured](const Resolution& r) {
      *token += static_cast<int>(r.prepare_seqno) + static_cast<int>(captured.size());
    };
    EXPECT_EQ(token.use_count(), 2);
    Completion b;
    b = std::move(a);
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(token.use_count(), 2) << "moved, not copied";
    b(resolutionOf(3));
    EXPECT_EQ(*token, 103);
    Completion c = [token](const Resolution&) {};
    EXPECT_EQ(token.use_count(), 3);
    c = std::move(b);  // destroys c's own callable first
    EXPECT_EQ(token.use_count(), 2);
  }
  EXPECT_EQ(token.use_count(), 1) << "every copy of the capture destroyed";
}

TEST(Completion, HoldsAStdFunction) {
  int calls = 0;
  std::function<void(const Resolution&)> f = [&calls](const Resolution&) { ++calls; };
  Completion c = f;
  c(resolutionOf(1));
  c(resolutionOf(2));
  EXPECT_EQ(calls, 2);
}

TEST(Completion, AnExceptionFromTheCallablePropagates) {
  Completion c = [](const Resolution&) { throw std::runtime_error("boom"); };
  EXPECT_THROW(c(resolutionOf(1)), std::runtime_error);
}

TEST(Completion, IsTwentyFourBytes) {
  // The point of the type: 8 bytes less than std::function per pending write.
  EXPECT_EQ(sizeof(Completion), 24u);
  EXPECT_LT(sizeof(Completion), sizeof(std::function<void(const Resolution&)>));
}

}  // namespace
}  // namespace syncwrite::durability
