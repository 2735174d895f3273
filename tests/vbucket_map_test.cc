// VBucketMap: fixed set of vbuckets created up front, config-driven size, and
// the memory an idle vbucket costs.
#include <malloc.h>

#include <cstdio>
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

// The idle cost figure in vbucket_map.h: heap bytes per idle vbucket, as
// glibc's allocator counts them (mallinfo2().uordblks, including chunk
// headers). Sanitizer builds replace malloc; there the delta reads 0 and the
// figure is not checked.
TEST(VBucketMap, IdleVBucketMemory) {
  constexpr size_t kVBuckets = 1024;
  const size_t before = mallinfo2().uordblks;
  auto map = std::make_unique<VBucketMap>(kVBuckets, VBucketState::kActive);
  const size_t after = mallinfo2().uordblks;
  const size_t per_vbucket = (after - before) / kVBuckets;
  std::printf("idle vbucket: sizeof(VBucket) = %zu, heap per vbucket = %zu bytes\n",
              sizeof(VBucket), per_vbucket);
  RecordProperty("sizeof_vbucket", static_cast<int>(sizeof(VBucket)));
  RecordProperty("heap_bytes_per_idle_vbucket", static_cast<int>(per_vbucket));
  if (after > before) {
    EXPECT_GE(per_vbucket, sizeof(VBucket));
    EXPECT_LE(per_vbucket, 2048u);
  }
}

}  // namespace
}  // namespace syncwrite::vbucket
