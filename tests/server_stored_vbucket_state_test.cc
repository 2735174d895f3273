// StoredVBucketState: the vbucket state a persistent bucket writes beside its
// documents goes to JSON and back unchanged, and text that is not such a
// state is refused as DataLoss naming the vbucket and what is wrong — warmup
// then refuses to serve rather than load a damaged state.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/stored_vbucket_state.h"

namespace syncwrite::server {
namespace {

using ::testing::HasSubstr;

TEST(StoredVBucketState, GoesToJsonAndBack) {
  StoredVBucketState state;
  state.state = vbucket::VBucketState::kReplica;
  state.high_seqno = 42;
  state.failovers = {{.uuid = 7, .seqno = 40}, {.uuid = 3, .seqno = 0}};
  state.topology = R"([["n1","n2"]])";
  state.max_cas = 1234567890123ULL;
  absl::StatusOr<StoredVBucketState> back = StoredVBucketState::fromJson(5, state.toJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->state, vbucket::VBucketState::kReplica);
  EXPECT_EQ(back->high_seqno, 42u);
  EXPECT_EQ(back->failovers, state.failovers);
  EXPECT_EQ(back->topology, state.topology);
  EXPECT_EQ(back->max_cas, 1234567890123ULL);
  // kv_engine's key names.
  EXPECT_THAT(state.toJson(), HasSubstr(R"("failover_table":[{"id":7,"seq":40})"));
}

TEST(StoredVBucketState, RefusesWhatIsNotAStateNamingTheVbucket) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "not a JSON object"},
      {R"({"version": 2})", "version is not 1"},
      {R"({"version": 1, "state": "sleeping"})", "is no vbucket state"},
      {R"({"version": 1, "state": "active", "high_seqno": -1, "max_cas": 0})",
       "\"high_seqno\" is not an unsigned number"},
      {R"({"version": 1, "state": "active", "high_seqno": 1, "max_cas": 0,
           "failover_table": [{"id": 1}]})",
       "is not {\"id\": n, \"seq\": n}"},
  };
  for (const auto& [text, why] : cases) {
    absl::StatusOr<StoredVBucketState> state = StoredVBucketState::fromJson(9, text);
    ASSERT_FALSE(state.ok()) << text;
    EXPECT_EQ(state.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(state.status().message()), HasSubstr("vbucket 9"));
    EXPECT_THAT(std::string(state.status().message()), HasSubstr(why)) << text;
  }
}

}  // namespace
}  // namespace syncwrite::server
