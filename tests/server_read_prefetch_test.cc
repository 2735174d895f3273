// Read prefetch (server/read_prefetch.h). collectLookups() is checked
// exactly: which requests it takes, with which table and key, where it stops.
// prefetchReads() only warms the cache, so its tests check that it changes
// nothing and reads nothing outside the bytes it was given (ASan checks the
// second: every stream lives in an allocation of exactly its size). The
// dispatcher fuzz target runs it over arbitrary streams too.
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

#include "config/configuration.h"
#include "executor/executor_pool.h"
#include "server/bucket.h"
#include "server/command.h"
#include "server/protocol/packet.h"
#include "server/protocol/request_encoder.h"
#include "server/read_prefetch.h"
#include "server/sasl/user_store.h"
#include "server/server_context.h"
#include "vbucket/checkpoint_manager.h"
#include "vbucket/hash_table.h"

namespace syncwrite::server {
namespace {

using protocol::Opcode;

class ReadPrefetch : public testing::Test {
 protected:
  void SetUp() override {
    context_.server_config = std::make_unique<config::Configuration>(config::Scope::kServer);
    context_.node_name = "active";
    context_.pool = std::make_unique<executor::ExecutorPool>(1);
    BucketSpec spec;
    spec.name = "default";
    spec.config = std::make_unique<config::Configuration>(config::Scope::kBucket);
    ASSERT_TRUE(spec.config->loadString(R"({"max_vbuckets": 4})").ok());
    auto bucket = Bucket::create(std::move(spec), context_.node_name, *context_.pool,
                                 [this]() -> boost::asio::io_context& { return io_; });
    ASSERT_TRUE(bucket.ok()) << bucket.status();
    bucket_ = bucket->get();
    context_.buckets["default"] = std::move(*bucket);
    context_.default_bucket = bucket_;
    vbucket::VBucket& vb = *bucket_->vbuckets().get(0);
    item_ = vb.checkpointManager().queue(vbucket::QueueOp::kMutation, "k", "v", 1);
    ASSERT_TRUE(vb.hashTable().setCommitted(item_));
    refs_ = item_->refs.load();
  }

  // Runs prefetchReads over a copy of `stream` in an allocation of exactly
  // its size, then checks that the stored item is as it was.
  void prefetch(std::string_view stream, size_t max_packets = 32) {
    auto bytes = std::make_unique<char[]>(stream.size());
    std::memcpy(bytes.get(), stream.data(), stream.size());
    prefetchReads({bytes.get(), stream.size()}, session_, context_, max_packets);
    EXPECT_EQ(item_->refs.load(), refs_) << "a hint took a reference";
    vbucket::VBucket& vb = *bucket_->vbuckets().get(0);
    EXPECT_EQ(vb.hashTable().size(), 1u);
    EXPECT_EQ(vb.hashTable().find("k"), item_);
  }

  // collectLookups over `stream`, as (vbucket id, key) pairs.
  std::vector<std::pair<int, std::string>> collect(std::string_view stream,
                                                   size_t max_packets = 32) {
    std::array<KeyLookup, kMaxPrefetchLookups> out;
    const size_t n = collectLookups(stream, session_, context_, max_packets, out);
    std::vector<std::pair<int, std::string>> found;
    for (size_t i = 0; i < n; ++i) found.emplace_back(vbucketOf(out[i].table), out[i].key);
    return found;
  }

  // Which of the bucket's vbuckets owns `table` (-1: none of them).
  int vbucketOf(const vbucket::HashTable* table) const {
    for (int id = 0; id < 4; ++id) {
      if (&bucket_->vbuckets().get(static_cast<vbucket::Vbid>(id))->hashTable() == table) return id;
    }
    return -1;
  }

  boost::asio::io_context io_;  // never run
  ServerContext context_;
  Bucket* bucket_ = nullptr;
  Session session_;
  vbucket::QueuedItem item_;
  uint32_t refs_ = 0;
};

using Found = std::vector<std::pair<int, std::string>>;

TEST_F(ReadPrefetch, CollectsTheKeysOfCommandsThatLookThemUp) {
  std::string stream;
  protocol::appendGet(stream, 1, 0, "k");
  protocol::appendSimple(stream, Opcode::kNoop, 2);
  protocol::appendStore(stream, Opcode::kSetQ, 3, 1, "set-key", "a value");
  protocol::appendGet(stream, 4, 99, "nowhere");  // no such vbucket: skipped
  protocol::appendDelete(stream, 5, 2, "deleted");
  protocol::appendStat(stream, 6, "durability");  // a key, but no lookup
  // Magic 0x08: the key follows the framing extras and the extras.
  protocol::appendRequest(stream, {.opcode = Opcode::kAdd,
                                   .opaque = 7,
                                   .vbucket = 3,
                                   .durability = protocol::DurabilitySpec{},
                                   .extras = std::string(8, 'x'),
                                   .key = "durable-key",
                                   .value = "v"});
  protocol::appendRequest(stream, {.opcode = Opcode::kGetKQ, .opaque = 8, .key = "quiet"});
  EXPECT_EQ(collect(stream),
            (Found{{0, "k"}, {1, "set-key"}, {2, "deleted"}, {3, "durable-key"}, {0, "quiet"}}));
  // The first packets only; a cut packet ends it.
  EXPECT_EQ(collect(stream, 3), (Found{{0, "k"}, {1, "set-key"}}));
  EXPECT_EQ(collect(stream.substr(0, stream.size() - 1)),
            (Found{{0, "k"}, {1, "set-key"}, {2, "deleted"}, {3, "durable-key"}}));
  // At most as many as `out` holds.
  std::string many;
  for (uint32_t i = 0; i < 100; ++i) protocol::appendGet(many, i, 0, "k");
  EXPECT_EQ(collect(many, 100).size(), kMaxPrefetchLookups);
}

TEST_F(ReadPrefetch, LooksInTheSessionsBucketAndOnlyOnceItMayUseOne) {
  std::string get;
  protocol::appendGet(get, 1, 0, "k");
  const std::string stream = get + get;
  EXPECT_EQ(collect(stream).size(), 2u);
  context_.default_bucket = nullptr;  // none selected, none by default
  EXPECT_TRUE(collect(stream).empty());
  session_.bucket = bucket_;  // after SELECT_BUCKET
  EXPECT_EQ(collect(stream).size(), 2u);
  // A server with users refuses data commands before SASL: nothing to warm.
  context_.users = std::make_unique<sasl::UserStore>(
      std::map<std::string, std::string, std::less<>>{{"user", "password"}});
  EXPECT_TRUE(collect(stream).empty());
  session_.user = "user";
  EXPECT_EQ(collect(stream).size(), 2u);
}

TEST_F(ReadPrefetch, EveryKindOfRequestChangesNothing) {
  std::string stream;
  protocol::appendGet(stream, 1, 0, "k");
  protocol::appendGet(stream, 2, 0, "absent");
  protocol::appendGet(stream, 3, 1, "k");   // another vbucket's empty table
  protocol::appendGet(stream, 4, 99, "k");  // no such vbucket
  protocol::appendStore(stream, Opcode::kSetQ, 5, 0, "k", "new value");
  protocol::appendDelete(stream, 6, 0, "k");
  protocol::appendRequest(stream, {.opcode = Opcode::kSet,
                                   .opaque = 7,
                                   .durability = protocol::DurabilitySpec{},
                                   .extras = std::string(8, '\0'),
                                   .key = "k",
                                   .value = "durable"});
  protocol::appendSimple(stream, Opcode::kNoop, 8);
  protocol::appendStat(stream, 9, "");
  prefetch(stream);
  prefetch(stream, 1);
  prefetch(stream, 0);
  prefetch(stream.substr(0, stream.size() - 3));     // the last packet cut short
  prefetch(std::string_view(stream).substr(0, 10));  // not even a header

  // More lookups than one call keeps: it stops there.
  std::string many;
  for (uint32_t i = 0; i < 100; ++i) protocol::appendGet(many, i, 0, "k");
  prefetch(many, 100);

  // No bucket to look in.
  context_.default_bucket = nullptr;
  prefetch(stream);
}

TEST_F(ReadPrefetch, MalformedPacketsStopItWithinTheBytes) {
  std::string get;
  protocol::appendGet(get, 1, 0, "k");
  // A key longer than the body: the sections do not fit.
  std::string long_key = get;
  long_key[2] = '\x7f';
  prefetch(long_key);
  // A body longer than what is buffered.
  std::string long_body = get;
  long_body[11] = '\x7f';
  prefetch(long_body);
  // A response, not a request.
  std::string response = get;
  response[0] = '\x81';
  prefetch(response + get);
  // Framing extras longer than the body (magic 0x08 reads byte 2 as their
  // length).
  std::string framed = get;
  framed[0] = '\x08';
  framed[2] = '\x40';
  prefetch(framed);
}

}  // namespace
}  // namespace syncwrite::server
