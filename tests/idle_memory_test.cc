// The heap an idle vbucket costs, counted allocation by allocation.
//
// This binary replaces the global operator new and delete with ones that
// count, per thread, the bytes requested and not yet freed. The counts are the
// requested sizes (no allocator headers or rounding), so they are the same on
// every run and in every build of one toolchain: the figures quoted in
// vbucket/vbucket_map.h and durability/bucket_durability.h are checked here
// exactly, and a change to either must change the comment in the same commit.
// (mallinfo-based figures varied with the allocator's state, and read 0 under
// the sanitizers' allocators; these do not.)
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include <gtest/gtest.h>

#include "clock/manual_clock.h"
#include "config/configuration.h"
#include "durability/bucket_durability.h"
#include "executor/executor_pool.h"
#include "tests/durability_test_support.h"
#include "vbucket/vbucket_map.h"

namespace {

// Bytes requested by this thread and not yet freed (frees made on another
// thread of blocks allocated here are not seen, and the scenarios below make
// none while they count).
thread_local int64_t tl_live_bytes = 0;

// Each block starts with a header of `kHeader` bytes (a multiple of every
// alignment asked for here) holding the requested size.
constexpr size_t kHeader = 64;

void* countedAlloc(size_t size, size_t align) {
  if (align > kHeader) std::abort();  // not used by this project
  void* raw = std::aligned_alloc(kHeader, (kHeader + size + kHeader - 1) / kHeader * kHeader);
  if (raw == nullptr) throw std::bad_alloc();
  *static_cast<size_t*>(raw) = size;
  tl_live_bytes += static_cast<int64_t>(size);
  return static_cast<char*>(raw) + kHeader;
}

void countedFree(void* p) noexcept {
  if (p == nullptr) return;
  char* raw = static_cast<char*>(p) - kHeader;
  tl_live_bytes -= static_cast<int64_t>(*reinterpret_cast<size_t*>(raw));
  std::free(raw);
}

}  // namespace

void* operator new(size_t size) { return countedAlloc(size, alignof(std::max_align_t)); }
void* operator new[](size_t size) { return countedAlloc(size, alignof(std::max_align_t)); }
void* operator new(size_t size, std::align_val_t align) {
  return countedAlloc(size, static_cast<size_t>(align));
}
void* operator new[](size_t size, std::align_val_t align) {
  return countedAlloc(size, static_cast<size_t>(align));
}
void operator delete(void* p) noexcept { countedFree(p); }
void operator delete[](void* p) noexcept { countedFree(p); }
void operator delete(void* p, size_t) noexcept { countedFree(p); }
void operator delete[](void* p, size_t) noexcept { countedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { countedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { countedFree(p); }

namespace syncwrite {
namespace {

constexpr size_t kVBuckets = 1024;

// Live bytes this thread gained while `fn` ran.
template <typename Fn>
int64_t liveBytesAdded(Fn&& fn) {
  const int64_t before = tl_live_bytes;
  fn();
  return tl_live_bytes - before;
}

// vbucket/vbucket_map.h quotes this figure.
TEST(IdleMemory, AnIdleVBucketHoldsItsObjectAndOneCheckpoint) {
  std::unique_ptr<vbucket::VBucketMap> map;
  const int64_t bytes = liveBytesAdded([&] {
    map = std::make_unique<vbucket::VBucketMap>(kVBuckets, vbucket::VBucketState::kActive);
  });
  RecordProperty("bytes_for_1024_idle_vbuckets", static_cast<int>(bytes));
  EXPECT_EQ(bytes, 598040) << "update the figure in vbucket/vbucket_map.h";
}

// durability/bucket_durability.h quotes these figures: what durability adds
// to each idle active vbucket, in each timeout mode.
class IdleDurabilityMemory : public ::testing::TestWithParam<durability::TimeoutMode> {};

TEST_P(IdleDurabilityMemory, PerActiveVBucket) {
  config::Configuration config(config::Scope::kBucket);
  ASSERT_TRUE(
      config
          .loadJson({{"max_vbuckets", kVBuckets},
                     {"durability_timeout_mode", std::string(durability::toString(GetParam()))}})
          .ok());
  vbucket::VBucketMap map(config, vbucket::VBucketState::kActive);
  executor::ExecutorPool pool(2);
  clock::ManualClock clock;
  std::unique_ptr<durability::BucketDurability> bucket;
  const int64_t bytes = liveBytesAdded([&] {
    bucket = std::make_unique<durability::BucketDurability>(
        "idle", config, map, pool, durability::testing::chainOf({"replica1"}),
        clock::ClockRef::of(clock));
  });
  RecordProperty("durability_bytes_for_1024_idle_vbuckets", static_cast<int>(bytes));
  const int64_t expected = GetParam() == durability::TimeoutMode::kEventDriven ? 1289783 : 1289966;
  EXPECT_EQ(bytes, expected) << "update the figures in durability/bucket_durability.h";
  bucket.reset();
}

INSTANTIATE_TEST_SUITE_P(Modes, IdleDurabilityMemory,
                         ::testing::Values(durability::TimeoutMode::kEventDriven,
                                           durability::TimeoutMode::kPolling),
                         [](const auto& info) {
                           return info.param == durability::TimeoutMode::kEventDriven
                                      ? std::string("EventDriven")
                                      : std::string("Polling");
                         });

}  // namespace
}  // namespace syncwrite
