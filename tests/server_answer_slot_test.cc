// server::AnswerSlot, the 32 bytes a connection keeps per request behind an
// owed answer: a resolved SyncWrite's slot sends exactly the bytes
// appendLateAnswer builds, for every shape it can hold and every resolution
// (size() included); a shape with a counter is left to the caller, with its
// counter intact; an inline slot reports the size it was given.
#include "server/answer_slot.h"

#include <string>

#include <gtest/gtest.h>

namespace syncwrite::server {
namespace {

using durability::AmbiguousReason;
using State = AnswerSlot::State;

TEST(AnswerSlot, ResolvedSendsWhatAppendLateAnswerBuilds) {
  int cases = 0;
  for (int bits = 0; bits < 32; ++bits) {
    LateAnswerShape shape;
    shape.vbucket_uuid = 0x0102030405060708;
    shape.opaque = 0xdeadbeef;
    shape.opcode = (bits & 1) != 0 ? protocol::Opcode::kDelete : protocol::Opcode::kSet;
    shape.quiet = (bits & 2) != 0;
    shape.has_uuid = (bits & 4) != 0;
    shape.zero_cas = (bits & 8) != 0;
    shape.json = (bits & 16) != 0;
    for (int r = -1; r <= static_cast<int>(AmbiguousReason::kFlushed); ++r) {
      durability::Resolution resolution;
      resolution.committed = r < 0;
      if (r >= 0) resolution.reason = static_cast<AmbiguousReason>(r);
      resolution.cas = 0x1122334455667788;
      resolution.resolution_seqno = 0x99;
      resolution.prepare_seqno = 0x98;
      std::string expected;
      appendLateAnswer(expected, shape, resolution);
      AnswerSlot slot = AnswerSlot::pending(shape);
      ASSERT_EQ(slot.state(), State::kPending);
      EXPECT_FALSE(slot.ready());
      ASSERT_TRUE(slot.resolve(resolution));
      ASSERT_EQ(slot.state(), State::kResolved);
      std::string sent = "before";
      slot.appendResolved(sent);
      EXPECT_EQ(sent, "before" + expected) << "bits " << bits << ", resolution " << r;
      EXPECT_EQ(slot.size(), expected.size()) << "bits " << bits << ", resolution " << r;
      EXPECT_EQ(lateAnswerSize(shape, resolution), expected.size());
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32 * 6);
}

TEST(AnswerSlot, ACounterDoesNotFitAndKeepsItsShape) {
  LateAnswerShape shape;
  shape.opcode = protocol::Opcode::kIncrement;
  shape.opaque = 7;
  shape.has_counter = true;
  shape.has_uuid = true;
  shape.vbucket_uuid = 0xabcdef;
  shape.counter = 42;
  durability::Resolution committed;
  committed.committed = true;
  committed.cas = 5;
  committed.resolution_seqno = 9;
  AnswerSlot slot = AnswerSlot::pending(shape);
  EXPECT_FALSE(slot.resolve(committed));
  ASSERT_EQ(slot.state(), State::kPending) << "unchanged";
  const LateAnswerShape back = slot.shape();
  EXPECT_EQ(back.counter, 42u);
  EXPECT_TRUE(back.has_counter);
  EXPECT_TRUE(back.has_uuid);
  EXPECT_EQ(back.vbucket_uuid, 0xabcdefu);
  EXPECT_EQ(back.opaque, 7u);
  EXPECT_EQ(back.opcode, protocol::Opcode::kIncrement);
  std::string built;
  appendLateAnswer(built, back, committed);
  EXPECT_EQ(lateAnswerSize(back, committed), built.size());
  slot.markOutOfLine(built.size());
  EXPECT_EQ(slot.state(), State::kOutOfLine);
  EXPECT_TRUE(slot.ready());
  EXPECT_EQ(slot.size(), built.size());
}

TEST(AnswerSlot, InlineReportsItsSize) {
  const AnswerSlot slot = AnswerSlot::inlineAnswer(57);
  EXPECT_EQ(slot.state(), State::kInline);
  EXPECT_TRUE(slot.ready());
  EXPECT_EQ(slot.size(), 57u);
}

}  // namespace
}  // namespace syncwrite::server
