// server::ResolvedAnswer, the 32 bytes a connection's slot keeps for a
// resolved SyncWrite until it sends the answer: for every shape it can hold
// and every resolution, it sends exactly the bytes appendLateAnswer builds
// (size() included), and a shape with a counter is left to the caller.
#include <string>

#include <gtest/gtest.h>

#include "server/command.h"

namespace syncwrite::server {
namespace {

using durability::AmbiguousReason;

TEST(ResolvedAnswer, SendsWhatAppendLateAnswerBuilds) {
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
      const std::optional<ResolvedAnswer> answer = ResolvedAnswer::of(shape, resolution);
      ASSERT_TRUE(answer.has_value());
      std::string sent = "before";
      answer->appendTo(sent);
      EXPECT_EQ(sent, "before" + expected) << "bits " << bits << ", resolution " << r;
      EXPECT_EQ(answer->size(), expected.size()) << "bits " << bits << ", resolution " << r;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32 * 6);
}

TEST(ResolvedAnswer, ACounterDoesNotFit) {
  LateAnswerShape shape;
  shape.opcode = protocol::Opcode::kIncrement;
  shape.has_counter = true;
  shape.counter = 42;
  durability::Resolution committed;
  committed.committed = true;
  EXPECT_FALSE(ResolvedAnswer::of(shape, committed).has_value());
}

}  // namespace
}  // namespace syncwrite::server
