// BucketDurability on an ephemeral bucket (bucket_type ephemeral): which
// durability levels it accepts, and which durability_min_level.
#include <string_view>

#include <absl/status/status.h>
#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "config/configuration.h"
#include "durability/bucket_durability.h"
#include "executor/executor_pool.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::durability {
namespace {

using testing::Recorder;
using vbucket::VBucketState;

// kv_engine's ephemeral buckets refuse the levels that need a disk
// (EphemeralVBucket::isValidDurabilityLevel), and so does bucket_type
// ephemeral: the write is refused, queues nothing and calls no completion; a
// durability_min_level that would raise every write to one is refused too.
TEST(EphemeralBucketDurability, RefusesThePersistLevelsAndAMinimumLevelThatNeedsThem) {
  config::Configuration config(config::Scope::kBucket);
  ASSERT_TRUE(config.loadJson({{"max_vbuckets", 1}}).ok());  // bucket_type ephemeral
  vbucket::VBucketMap map(config, VBucketState::kActive);
  executor::ExecutorPool pool(1);
  clock::ManualClock clock;
  BucketDurability bucket("ephemeral", config, map, pool, testing::chainOf({"replica1"}),
                          clock::ClockRef::of(clock));
  Recorder recorder;
  for (Level level : {Level::kMajorityAndPersistOnMaster, Level::kPersistToMajority}) {
    const Requirements requirements{level, Timeout::bucketDefault()};
    const WriteResult r = bucket.write(0, WriteRequest{WriteOp::kSet, "k", "v", 1, requirements},
                                       recorder.completion("k"));
    EXPECT_EQ(r.status, WriteStatus::kInvalidLevel) << toString(level);
  }
  EXPECT_EQ(map.at(0).highSeqno(), 0u) << "a refused write queued something";
  EXPECT_EQ(bucket.inFlight(0), 0u);
  const Requirements majority{Level::kMajority, Timeout::bucketDefault()};
  EXPECT_EQ(
      bucket.write(0, WriteRequest{WriteOp::kSet, "k", "v", 1, majority}, recorder.completion("k"))
          .status,
      WriteStatus::kPending);

  const absl::Status refused = config.setFromText("durability_min_level", "persist_to_majority");
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("ephemeral"), std::string_view::npos) << refused;
  EXPECT_EQ(config.get(config::keys::kDurabilityMinLevel), config::DurabilityMinLevel::kNone);
  EXPECT_TRUE(config.setFromText("durability_min_level", "majority").ok());
  bucket.shutdown(AmbiguousReason::kShutdown);
}

}  // namespace
}  // namespace syncwrite::durability
