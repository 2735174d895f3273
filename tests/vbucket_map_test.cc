// VBucketMap: fixed set of vbuckets created up front, config-driven size.
// (What an idle vbucket costs: tests/idle_memory_test.cc.)
#include <memory>

#include <gtest/gtest.h>

#include "config/configuration.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::vbucket {
namespace {

TEST(VBucketMap, CreatesEveryVBucketUpFrontInTheInitialState) {
  VBucketMap map(16, VBucketState::kReplica);
  ASSERT_EQ(map.size(), 16u);
  for (Vbid id = 0; id < 16; ++id) {
    ASSERT_NE(map.get(id), nullptr);
    EXPECT_EQ(map.get(id)->id(), id);
    EXPECT_EQ(&map.at(id), map.get(id));
  }
  EXPECT_EQ(map.get(16), nullptr);
  EXPECT_EQ(map.countInState(VBucketState::kReplica), 16u);
  map.at(3).setState(VBucketState::kActive);
  EXPECT_EQ(map.countInState(VBucketState::kActive), 1u);
}

TEST(VBucketMap, SizeComesFromMaxVBuckets) {
  config::Configuration bucket(config::Scope::kBucket);
  EXPECT_EQ(VBucketMap(bucket, VBucketState::kActive).size(), 1024u);
  ASSERT_TRUE(bucket.loadString(R"({"max_vbuckets": 64})").ok());
  EXPECT_EQ(VBucketMap(bucket, VBucketState::kActive).size(), 64u);
}

TEST(VBucketMap, RefusesZeroVBuckets) {
  EXPECT_THROW(VBucketMap(0, VBucketState::kActive), std::invalid_argument);
}

}  // namespace
}  // namespace syncwrite::vbucket
