// The soak's model (bench/soak/model.h): what it lets pass and what it
// reports, since a checker that cannot fail proves nothing.
#include "bench/soak/model.h"

#include <gtest/gtest.h>

namespace syncwrite::bench::soak {
namespace {

using server::protocol::Status;

TEST(SoakJudge, EachStatusIsLegalOnlyForTheRequestsThatMayGetIt) {
  EXPECT_EQ(judge(Op::kSet, false, Status::kSuccess).outcome, Outcome::kApplied);
  EXPECT_EQ(judge(Op::kGet, false, Status::kSuccess).outcome, Outcome::kRefused);
  EXPECT_TRUE(judge(Op::kAdd, false, Status::kKeyExists).legal);
  EXPECT_FALSE(judge(Op::kSet, false, Status::kKeyExists).legal);
  EXPECT_FALSE(judge(Op::kAdd, true, Status::kKeyNotFound).legal);
  EXPECT_TRUE(judge(Op::kReplace, true, Status::kKeyNotFound).legal);
  EXPECT_TRUE(judge(Op::kDelete, false, Status::kKeyNotFound).legal);
  EXPECT_EQ(judge(Op::kSet, true, Status::kSyncWriteAmbiguous).outcome, Outcome::kInDoubt);
  EXPECT_FALSE(judge(Op::kSet, false, Status::kSyncWriteAmbiguous).legal);
  EXPECT_FALSE(judge(Op::kGet, false, Status::kSyncWriteInProgress).legal);
  EXPECT_TRUE(judge(Op::kSet, false, Status::kSyncWriteInProgress).legal);
  EXPECT_FALSE(judge(Op::kSet, false, Status::kDurabilityImpossible).legal);
  EXPECT_TRUE(judge(Op::kGet, false, Status::kNotMyVbucket).legal);
  EXPECT_FALSE(judge(Op::kSet, false, Status::kEinval).legal);
}

TEST(SoakKeyModel, AnAppliedWriteOverridesEarlierDoubtsAndDoubtsAddCandidates) {
  KeyModel key;
  EXPECT_TRUE(key.mayBeAbsent());
  EXPECT_FALSE(key.mayBePresent());
  key.write("a", Outcome::kApplied);
  key.write("b", Outcome::kInDoubt);
  key.write("c", Outcome::kRefused);
  EXPECT_TRUE(key.mayHold("a"));
  EXPECT_TRUE(key.mayHold("b"));
  EXPECT_FALSE(key.mayHold("c"));
  EXPECT_FALSE(key.mayBeAbsent());
  key.write(std::nullopt, Outcome::kInDoubt);  // a delete in doubt
  EXPECT_TRUE(key.mayBeAbsent());
  EXPECT_EQ(key.describe(), "\"a\" or \"b\" (in doubt) or absent (in doubt)");
  key.write("d", Outcome::kApplied);
  EXPECT_TRUE(key.mayHold("d"));
  EXPECT_FALSE(key.mayHold("a"));
  EXPECT_FALSE(key.mayHold("b"));
  EXPECT_FALSE(key.mayBeAbsent());
}

TEST(SoakCheckAnswer, AnswersTheModelCannotExplainAreReported) {
  KeyModel key;
  key.write("a", Outcome::kApplied);
  EXPECT_EQ(checkAnswer(Op::kGet, Status::kSuccess, "a", key), "");
  EXPECT_EQ(checkAnswer(Op::kGet, Status::kSuccess, "z", key),
            "GET answered Success \"z\" but the key can only be \"a\"");
  EXPECT_NE(checkAnswer(Op::kGet, Status::kKeyNotFound, std::nullopt, key), "");
  EXPECT_NE(checkAnswer(Op::kAdd, Status::kSuccess, std::nullopt, key), "");
  EXPECT_EQ(checkAnswer(Op::kAdd, Status::kKeyExists, std::nullopt, key), "");
  EXPECT_EQ(checkAnswer(Op::kReplace, Status::kSuccess, std::nullopt, key), "");

  KeyModel absent;
  EXPECT_NE(checkAnswer(Op::kReplace, Status::kSuccess, std::nullopt, absent), "");
  EXPECT_NE(checkAnswer(Op::kDelete, Status::kSuccess, std::nullopt, absent), "");
  EXPECT_NE(checkAnswer(Op::kAdd, Status::kKeyExists, std::nullopt, absent), "");
  EXPECT_EQ(checkAnswer(Op::kDelete, Status::kKeyNotFound, std::nullopt, absent), "");
  absent.write("b", Outcome::kInDoubt);  // either is possible now
  EXPECT_EQ(checkAnswer(Op::kAdd, Status::kKeyExists, std::nullopt, absent), "");
  EXPECT_EQ(checkAnswer(Op::kAdd, Status::kSuccess, std::nullopt, absent), "");
}

}  // namespace
}  // namespace syncwrite::bench::soak
