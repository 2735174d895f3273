// Integration tests: the sub-document commands through the real
// syncwrite-server over TCP — each single-path lookup and mutation, the
// per-path statuses of MULTI_LOOKUP, MULTI_MUTATION's all or nothing with the
// failing index, xattrs (written by subdoc, hidden from GET, read back by
// subdoc), CAS, and a durable MULTI_MUTATION that is a SyncWrite.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/protocol/byte_order.h"
#include "server/protocol/feature.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Feature;
using protocol::Opcode;
using protocol::Status;
using testing::durable;
using testing::ServerProcess;
using testing::silentReplicaConfig;
using testing::statValue;

constexpr uint8_t kSubdocMkdirP = 0x01;
constexpr uint8_t kSubdocXattrPath = 0x04;
constexpr uint8_t kSubdocMkdoc = 0x01;
constexpr uint8_t kSubdocAdd = 0x02;
constexpr uint16_t kSubdocVb = 3;

// A client with XATTR agreed besides the usual features, bucket "default".
protocol::Client subdocClient(const ServerProcess& server) {
  protocol::Client client = server.connect();
  const std::vector<Feature> features{Feature::kXerror, Feature::kSelectBucket,
                                      Feature::kAltRequestSupport, Feature::kSyncReplication,
                                      Feature::kXattr};
  auto agreed = client.hello(features);
  if (!agreed.ok() || agreed->size() != features.size()) {
    throw std::runtime_error("the server did not agree to XATTR");
  }
  return client;
}

struct SubdocSpec {
  Opcode opcode = Opcode::kNoop;
  uint8_t flags = 0;
  std::string path = {};
  std::string value = {};
};

// A single-path command: extras path length, path flags, [doc flags].
absl::StatusOr<protocol::Response> subdocSingle(protocol::Client& client, Opcode opcode,
                                                std::string_view key, const SubdocSpec& spec,
                                                uint8_t doc_flags = 0, uint64_t cas = 0) {
  std::string extras;
  protocol::wire::append16(extras, static_cast<uint16_t>(spec.path.size()));
  extras.push_back(static_cast<char>(spec.flags));
  if (doc_flags != 0) extras.push_back(static_cast<char>(doc_flags));
  const std::string value = spec.path + spec.value;
  return testing::call(client, {.opcode = opcode,
                                .vbucket = kSubdocVb,
                                .cas = cas,
                                .extras = extras,
                                .key = key,
                                .value = value});
}

std::string subdocLookupBody(const std::vector<SubdocSpec>& specs) {
  std::string body;
  for (const SubdocSpec& spec : specs) {
    body.push_back(static_cast<char>(spec.opcode));
    body.push_back(static_cast<char>(spec.flags));
    protocol::wire::append16(body, static_cast<uint16_t>(spec.path.size()));
    body += spec.path;
  }
  return body;
}

std::string subdocMutationBody(const std::vector<SubdocSpec>& specs) {
  std::string body;
  for (const SubdocSpec& spec : specs) {
    body.push_back(static_cast<char>(spec.opcode));
    body.push_back(static_cast<char>(spec.flags));
    protocol::wire::append16(body, static_cast<uint16_t>(spec.path.size()));
    protocol::wire::append32(body, static_cast<uint32_t>(spec.value.size()));
    body += spec.path;
    body += spec.value;
  }
  return body;
}

absl::StatusOr<protocol::Response> subdocMultiLookup(protocol::Client& client, std::string_view key,
                                                     const std::vector<SubdocSpec>& specs) {
  const std::string body = subdocLookupBody(specs);
  return testing::call(
      client,
      {.opcode = Opcode::kSubdocMultiLookup, .vbucket = kSubdocVb, .key = key, .value = body});
}

protocol::RequestFields subdocMultiMutationFields(std::string_view key, const std::string& body,
                                                  const std::string& extras) {
  return {.opcode = Opcode::kSubdocMultiMutation,
          .vbucket = kSubdocVb,
          .extras = extras,
          .key = key,
          .value = body};
}

absl::StatusOr<protocol::Response> subdocMultiMutation(protocol::Client& client,
                                                       std::string_view key,
                                                       const std::vector<SubdocSpec>& specs,
                                                       uint8_t doc_flags = 0) {
  const std::string body = subdocMutationBody(specs);
  std::string extras;
  if (doc_flags != 0) extras.push_back(static_cast<char>(doc_flags));
  return testing::call(client, subdocMultiMutationFields(key, body, extras));
}

struct SubdocEntry {
  Status status;
  std::string value;
};

// A MULTI_LOOKUP answer's entries: status u16, length u32, value.
std::vector<SubdocEntry> subdocEntries(std::string_view body) {
  std::vector<SubdocEntry> entries;
  size_t at = 0;
  while (at + 6 <= body.size()) {
    const auto status = static_cast<Status>(protocol::wire::load16(body, at));
    const uint32_t length = protocol::wire::load32(body, at + 2);
    entries.push_back({status, std::string(body.substr(at + 6, length))});
    at += 6 + length;
  }
  return entries;
}

TEST(ServerSubdoc, EachSinglePathLookupAndMutation) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = subdocClient(server);
  ASSERT_EQ(client.set(kSubdocVb, "doc", R"({"a":1,"list":[1,2],"o":{"x":"y"}})")->status,
            Status::kSuccess);

  auto get = subdocSingle(client, Opcode::kSubdocGet, "doc", {.opcode = {}, .path = "o.x"});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, Status::kSuccess);
  EXPECT_EQ(get->value, R"("y")");
  EXPECT_NE(get->cas, 0u);
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocExists, "doc", {.opcode = {}, .path = "a"})->status,
            Status::kSuccess);
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocExists, "doc", {.opcode = {}, .path = "b"})->status,
            Status::kSubdocPathEnoent);
  auto count = subdocSingle(client, Opcode::kSubdocGetCount, "doc", {.opcode = {}, .path = "list"});
  EXPECT_EQ(count->value, "2");
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocGet, "nodoc", {.opcode = {}, .path = "a"})->status,
            Status::kKeyNotFound);

  const auto mutate = [&](Opcode opcode, std::string path, std::string value) {
    auto answer =
        subdocSingle(client, opcode, "doc",
                     {.opcode = opcode, .path = std::move(path), .value = std::move(value)});
    EXPECT_TRUE(answer.ok());
    return answer.ok() ? answer->status : Status::kInternalError;
  };
  EXPECT_EQ(mutate(Opcode::kSubdocDictAdd, "b", "true"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocDictAdd, "b", "true"), Status::kSubdocPathEexists);
  EXPECT_EQ(mutate(Opcode::kSubdocDictUpsert, "o.x", R"("z")"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocReplace, "a", "2"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocReplace, "missing", "2"), Status::kSubdocPathEnoent);
  EXPECT_EQ(mutate(Opcode::kSubdocArrayPushLast, "list", "3"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocArrayPushFirst, "list", "0"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocArrayInsert, "list[1]", R"("i")"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocArrayAddUnique, "list", "3"), Status::kSubdocPathEexists);
  EXPECT_EQ(mutate(Opcode::kSubdocArrayAddUnique, "list", "9"), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocDelete, "b", ""), Status::kSuccess);
  EXPECT_EQ(mutate(Opcode::kSubdocDictUpsert, "a.b", "1"), Status::kSubdocPathMismatch);
  auto counter = subdocSingle(client, Opcode::kSubdocCounter, "doc",
                              {.opcode = {}, .flags = kSubdocMkdirP, .path = "n", .value = "5"});
  ASSERT_TRUE(counter.ok());
  EXPECT_EQ(counter->status, Status::kSuccess);
  EXPECT_EQ(counter->value, "5");
  counter = subdocSingle(client, Opcode::kSubdocCounter, "doc",
                         {.opcode = {}, .path = "n", .value = "-7"});
  EXPECT_EQ(counter->value, "-2");

  auto whole = client.get(kSubdocVb, "doc");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(nlohmann::json::parse(whole->value),
            nlohmann::json::parse(R"({"a":2,"list":[0,"i",1,2,3,9],"o":{"x":"z"},"n":-2})"));

  // Mkdoc creates the document; a CAS must match; Add refuses an existing one.
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocDictUpsert, "fresh",
                         {.opcode = {}, .path = "p.q", .value = "1"}, kSubdocMkdoc)
                ->status,
            Status::kSuccess);
  EXPECT_EQ(client.get(kSubdocVb, "fresh")->value, R"({"p":{"q":1}})");
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocDictUpsert, "fresh",
                         {.opcode = {}, .path = "r", .value = "1"}, kSubdocAdd)
                ->status,
            Status::kKeyExists);
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocDictUpsert, "fresh",
                         {.opcode = {}, .path = "r", .value = "1"}, 0, whole->cas + 12345)
                ->status,
            Status::kKeyExists);
  const uint64_t fresh_cas = client.get(kSubdocVb, "fresh")->cas;
  EXPECT_EQ(subdocSingle(client, Opcode::kSubdocDictUpsert, "fresh",
                         {.opcode = {}, .path = "r", .value = "1"}, 0, fresh_cas)
                ->status,
            Status::kSuccess);

  // A malformed request is refused with a reason and the connection serves on.
  auto bad = testing::call(client, {.opcode = Opcode::kSubdocGet,
                                    .vbucket = kSubdocVb,
                                    .extras = std::string_view("\0\x09\0", 3),
                                    .key = "doc",
                                    .value = "a"});
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, Status::kEinval);
  EXPECT_NE(bad->errorContext().find("path length"), std::string::npos) << bad->errorContext();
  EXPECT_TRUE(client.noop().ok());
}

TEST(ServerSubdoc, MultiLookupAnswersEachPathsStatus) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = subdocClient(server);
  ASSERT_EQ(client.set(kSubdocVb, "doc", R"({"a":[1,2,3],"b":"x"})")->status, Status::kSuccess);
  auto answer = subdocMultiLookup(client, "doc",
                                  {{.opcode = Opcode::kSubdocGet, .path = "b"},
                                   {.opcode = Opcode::kSubdocExists, .path = "zz"},
                                   {.opcode = Opcode::kSubdocGetCount, .path = "a"},
                                   {.opcode = Opcode::kSubdocGet, .path = "b[0]"},
                                   {.opcode = Opcode::kGet, .path = ""}});
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, Status::kSubdocMultiPathFailure);
  const auto entries = subdocEntries(answer->value);
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_EQ(entries[0].status, Status::kSuccess);
  EXPECT_EQ(entries[0].value, R"("x")");
  EXPECT_EQ(entries[1].status, Status::kSubdocPathEnoent);
  EXPECT_EQ(entries[2].value, "3");
  EXPECT_EQ(entries[3].status, Status::kSubdocPathMismatch);
  EXPECT_EQ(entries[4].value, R"({"a":[1,2,3],"b":"x"})");

  auto all_good =
      subdocMultiLookup(client, "doc", {{.opcode = Opcode::kSubdocGet, .path = "a[-1]"}});
  EXPECT_EQ(all_good->status, Status::kSuccess);
  EXPECT_EQ(subdocEntries(all_good->value).at(0).value, "3");
}

TEST(ServerSubdoc, MultiMutationIsAllOrNothingAndNamesTheFailingSpec) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = subdocClient(server);
  ASSERT_EQ(client.set(kSubdocVb, "doc", R"({"a":1})")->status, Status::kSuccess);
  auto failed =
      subdocMultiMutation(client, "doc",
                          {{.opcode = Opcode::kSubdocDictUpsert, .path = "b", .value = "2"},
                           {.opcode = Opcode::kSubdocReplace, .path = "nope", .value = "3"}});
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->status, Status::kSubdocMultiPathFailure);
  ASSERT_EQ(failed->value.size(), 3u);
  EXPECT_EQ(failed->value[0], 1);
  EXPECT_EQ(static_cast<Status>(protocol::wire::load16(failed->value, 1)),
            Status::kSubdocPathEnoent);
  EXPECT_EQ(client.get(kSubdocVb, "doc")->value, R"({"a":1})") << "nothing stored";

  auto done = subdocMultiMutation(client, "doc",
                                  {{.opcode = Opcode::kSubdocDictUpsert, .path = "b", .value = "2"},
                                   {.opcode = Opcode::kSubdocCounter, .path = "a", .value = "10"}});
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status, Status::kSuccess);
  // The COUNTER's result: index 1, status Success, "11".
  ASSERT_EQ(done->value.size(), 1u + 2 + 4 + 2);
  EXPECT_EQ(done->value[0], 1);
  EXPECT_EQ(done->value.substr(7), "11");
  EXPECT_EQ(nlohmann::json::parse(client.get(kSubdocVb, "doc")->value),
            nlohmann::json::parse(R"({"a":11,"b":2})"));
}

TEST(ServerSubdoc, XattrsAreHiddenFromGetAndReadBySubdoc) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = subdocClient(server);
  ASSERT_EQ(client.set(kSubdocVb, "doc", R"({"body":true})")->status, Status::kSuccess);
  auto written = subdocMultiMutation(client, "doc",
                                     {{.opcode = Opcode::kSubdocDictUpsert,
                                       .flags = kSubdocXattrPath | kSubdocMkdirP,
                                       .path = "meta.owner",
                                       .value = R"("ann")"},
                                      {.opcode = Opcode::kSubdocDictUpsert,
                                       .flags = kSubdocXattrPath | kSubdocMkdirP | 0x10,
                                       .path = "meta.cas",
                                       .value = R"("${Mutation.CAS}")"}});
  ASSERT_TRUE(written.ok());
  ASSERT_EQ(written->status, Status::kSuccess) << written->errorContext();

  auto plain = client.get(kSubdocVb, "doc");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->value, R"({"body":true})") << "GET strips the xattrs";
  EXPECT_EQ(plain->cas, written->cas);

  auto read = subdocMultiLookup(
      client, "doc",
      {{.opcode = Opcode::kSubdocGet, .flags = kSubdocXattrPath, .path = "meta.owner"},
       {.opcode = Opcode::kSubdocGet, .flags = kSubdocXattrPath, .path = "$document.CAS"},
       {.opcode = Opcode::kSubdocGet, .flags = kSubdocXattrPath, .path = "meta.cas"},
       {.opcode = Opcode::kSubdocGet, .path = "body"}});
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->status, Status::kSuccess);
  const auto entries = subdocEntries(read->value);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].value, R"("ann")");
  EXPECT_EQ(entries[3].value, "true");
  // $document.CAS is the CAS as hex; the macro wrote the same CAS byte-reversed.
  char hex[19];
  std::snprintf(hex, sizeof(hex), "0x%016llx", static_cast<unsigned long long>(written->cas));
  EXPECT_EQ(entries[1].value, "\"" + std::string(hex) + "\"");
  EXPECT_EQ(entries[2].value.size(), entries[1].value.size());

  // ${Mutation.seqno} needs a hook the vbucket does not offer: NotSupported.
  auto seqno = subdocSingle(client, Opcode::kSubdocDictUpsert, "doc",
                            {.opcode = {},
                             .flags = kSubdocXattrPath | 0x10,
                             .path = "s",
                             .value = R"("${Mutation.seqno}")"});
  EXPECT_EQ(seqno->status, Status::kNotSupported);

  // Without HELLO XATTR, an xattr path is refused.
  auto plain_client = server.connect();
  auto refused = subdocSingle(plain_client, Opcode::kSubdocGet, "doc",
                              {.opcode = {}, .flags = kSubdocXattrPath, .path = "meta"});
  EXPECT_EQ(refused->status, Status::kEinval);
}

// APPEND, PREPEND and INCREMENT work on the body and keep the xattrs.
TEST(ServerSubdoc, BinaryCommandsKeepTheXattrs) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = subdocClient(server);
  const SubdocSpec xattr{.flags = kSubdocXattrPath | kSubdocMkdirP, .path = "x.y", .value = "1"};
  ASSERT_EQ(client.set(kSubdocVb, "text", "ab")->status, Status::kSuccess);
  ASSERT_EQ(client.set(kSubdocVb, "number", "5")->status, Status::kSuccess);
  for (const char* key : {"text", "number"}) {
    auto written = subdocSingle(client, Opcode::kSubdocDictUpsert, key, xattr);
    ASSERT_TRUE(written.ok());
    ASSERT_EQ(written->status, Status::kSuccess) << key << " " << written->errorContext();
  }
  ASSERT_EQ(
      testing::call(client,
                    {.opcode = Opcode::kAppend, .vbucket = kSubdocVb, .key = "text", .value = "cd"})
          ->status,
      Status::kSuccess);
  ASSERT_EQ(
      testing::call(client,
                    {.opcode = Opcode::kPrepend, .vbucket = kSubdocVb, .key = "text", .value = "<"})
          ->status,
      Status::kSuccess);
  const std::string delta = testing::counterExtras(2, 0);
  auto incremented = testing::call(
      client,
      {.opcode = Opcode::kIncrement, .vbucket = kSubdocVb, .extras = delta, .key = "number"});
  ASSERT_TRUE(incremented.ok());
  EXPECT_EQ(incremented->status, Status::kSuccess);
  EXPECT_EQ(client.get(kSubdocVb, "text")->value, "<abcd");
  EXPECT_EQ(client.get(kSubdocVb, "number")->value, "7");
  for (const char* key : {"text", "number"}) {
    auto read =
        subdocSingle(client, Opcode::kSubdocGet, key, {.flags = kSubdocXattrPath, .path = "x.y"});
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->status, Status::kSuccess) << key;
    EXPECT_EQ(read->value, "1") << key;
  }
}

// The cluster map tells SDKs what the bucket does, by Couchbase Server's names.
TEST(ServerSubdoc, ClusterMapListsTheXattrAndSubdocCapabilities) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = subdocClient(server);
  auto map = testing::call(client, {.opcode = Opcode::kGetClusterConfig});
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->status, Status::kSuccess);
  const auto capabilities =
      nlohmann::json::parse(map->value)["bucketCapabilities"].get<std::vector<std::string>>();
  for (const char* name :
       {"xattr", "subdoc.ReplaceBodyWithXattr", "subdoc.DocumentMacroSupport", "durableWrite"}) {
    EXPECT_NE(std::find(capabilities.begin(), capabilities.end(), name), capabilities.end())
        << name;
  }
}

TEST(ServerSubdoc, DurableMultiMutationIsASyncWrite) {
  // One bucket whose replica never acks, one whose simulated replica does.
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  auto writer = subdocClient(server);
  auto other = subdocClient(server);
  ASSERT_EQ(writer.set(kSubdocVb, "doc", R"({"n":0})")->status, Status::kSuccess);

  const std::string body =
      subdocMutationBody({{.opcode = Opcode::kSubdocCounter, .path = "n", .value = "1"}});
  protocol::RequestFields fields = subdocMultiMutationFields("doc", body, "");
  fields.durability = protocol::DurabilitySpec{durability::Level::kMajority, 200};
  fields.opaque = writer.nextOpaque();
  ASSERT_TRUE(writer.send(fields).ok());
  ASSERT_TRUE(testing::eventually(
      [&] { return statValue(other, "durability", "sync_writes_in_flight") == 1; }));

  // Meanwhile the key has a SyncWrite in flight.
  auto busy = subdocMultiMutation(
      other, "doc", {{.opcode = Opcode::kSubdocDictUpsert, .path = "m", .value = "1"}});
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->status, Status::kSyncWriteInProgress);

  auto ambiguous = writer.readResponse();
  ASSERT_TRUE(ambiguous.ok());
  EXPECT_EQ(ambiguous->opaque, fields.opaque);
  EXPECT_EQ(ambiguous->status, Status::kSyncWriteAmbiguous);
  EXPECT_EQ(writer.get(kSubdocVb, "doc")->value, R"({"n":0})") << "aborted";
}

TEST(ServerSubdoc, DurableMultiMutationCommitsWithAFastReplica) {
  ServerProcess server;
  ASSERT_TRUE(server.start());  // the embedded default: a simulated replica, 1 ms
  auto client = subdocClient(server);
  ASSERT_EQ(client.set(kSubdocVb, "doc", R"({"n":0})")->status, Status::kSuccess);
  const std::string body =
      subdocMutationBody({{.opcode = Opcode::kSubdocDictUpsert, .path = "m", .value = "1"},
                          {.opcode = Opcode::kSubdocCounter, .path = "n", .value = "4"}});
  protocol::RequestFields fields = subdocMultiMutationFields("doc", body, "");
  fields.durability = protocol::DurabilitySpec{durability::Level::kMajority, std::nullopt};
  auto committed = testing::call(client, fields);
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(committed->status, Status::kSuccess) << committed->errorContext();
  ASSERT_EQ(committed->value.size(), 8u);
  EXPECT_EQ(committed->value[0], 1);
  EXPECT_EQ(committed->value.substr(7), "4");
  EXPECT_EQ(nlohmann::json::parse(client.get(kSubdocVb, "doc")->value),
            nlohmann::json::parse(R"({"n":4,"m":1})"));
  EXPECT_EQ(statValue(client, "durability", "sync_writes_committed"), 1);
}

}  // namespace
}  // namespace syncwrite::server
