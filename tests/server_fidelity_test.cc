// Integration tests: the answers whose exact shape kv_engine fixes and
// clients act on, against the real syncwrite-server — item-level errors
// without a body, the statuses a client without XERROR is told (or the
// connection it loses), the error map's attributes and versions, the JSON
// datatype (refused unless negotiated, detected rather than trusted),
// sections longer than the body, counters read as safe_strtoull reads them,
// and SELECT_BUCKET of a bucket that does not exist or that the user may not
// access.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/protocol/byte_order.h"
#include "server/protocol/feature.h"
#include "server/protocol/request.h"
#include "server/protocol/request_encoder.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Feature;
using protocol::Opcode;
using protocol::Status;
using testing::call;
using testing::counterExtras;
using testing::durable;
using testing::ServerProcess;
using testing::silentReplicaConfig;

constexpr std::string_view kDefaultBucket =
    R"({"default_bucket": "default", "buckets": {"default": {}}})";

// A connection that sent no HELLO (a plain memcached client) or one that
// negotiated exactly `features`.
protocol::Client clientWith(const ServerProcess& server,
                            std::optional<std::vector<Feature>> features) {
  protocol::Client client = server.connectRaw();
  if (features) {
    auto agreed = client.hello(*features);
    if (!agreed.ok() || agreed->size() != features->size()) {
      throw std::runtime_error("the server did not agree to every feature asked");
    }
  }
  return client;
}

std::string setExtras() {
  std::string extras;
  protocol::wire::append32(extras, 0);  // flags
  protocol::wire::append32(extras, 0);  // expiry
  return extras;
}

void expectNoBody(const protocol::Response& answer, Status status) {
  EXPECT_EQ(answer.status, status);
  EXPECT_TRUE(answer.extras.empty() && answer.key.empty() && answer.value.empty())
      << protocol::toString(status) << " carried a body: " << answer.value;
  EXPECT_EQ(answer.datatype, protocol::kDatatypeRaw);
}

// kv_engine sets no error context for these: a GET miss is 24 bytes there.
TEST(ServerFidelity, ItemLevelErrorsCarryNoBody) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kDefaultBucket)));
  for (const bool xerror : {false, true}) {
    SCOPED_TRACE(xerror ? "XERROR and JSON" : "no HELLO");
    auto client = clientWith(
        server, xerror ? std::optional(std::vector<Feature>{Feature::kXerror, Feature::kJson})
                       : std::nullopt);
    const std::string key = xerror ? "with-xerror" : "plain";
    auto miss = client.get(0, key);
    ASSERT_TRUE(miss.ok());
    expectNoBody(*miss, Status::kKeyNotFound);
    auto replaced = client.replace(0, key, "v");
    ASSERT_TRUE(replaced.ok());
    expectNoBody(*replaced, Status::kKeyNotFound);
    auto appended = call(client, {.opcode = Opcode::kAppend, .key = key, .value = "x"});
    ASSERT_TRUE(appended.ok());
    expectNoBody(*appended, Status::kNotStored);
    ASSERT_EQ(client.set(0, key, "not a number")->status, Status::kSuccess);
    auto added = client.add(0, key, "v");
    ASSERT_TRUE(added.ok());
    expectNoBody(*added, Status::kKeyExists);
    auto moved = client.set(0, key, "v", {.cas = 1});
    ASSERT_TRUE(moved.ok());
    expectNoBody(*moved, Status::kKeyExists);
    const std::string extras = counterExtras(1, 0);
    auto bad_delta = call(client, {.opcode = Opcode::kIncrement, .extras = extras, .key = key});
    ASSERT_TRUE(bad_delta.ok());
    expectNoBody(*bad_delta, Status::kDeltaBadval);
  }
}

// kv_engine's Connection::remapErrorCode: a client that did not negotiate
// XERROR is told Etmpfail for SyncWriteInProgress, and is disconnected for
// the statuses it cannot understand (NoBucket, DurabilityInvalidLevel,
// SyncWriteAmbiguous, NoAccess). With XERROR each comes as it is.
TEST(ServerFidelity, ClientsWithoutXerrorAreToldWhatTheyUnderstandOrDisconnected) {
  ServerProcess server;
  ASSERT_TRUE(server.start(silentReplicaConfig("event-driven")));
  const std::vector<Feature> no_xerror{Feature::kSelectBucket, Feature::kAltRequestSupport,
                                       Feature::kSyncReplication};
  std::vector<Feature> with_xerror = no_xerror;
  with_xerror.push_back(Feature::kXerror);

  // SyncWriteInProgress: the writer keeps XERROR; the second writer has none.
  auto writer = server.connect();
  std::string pending;
  const uint32_t prepare = writer.nextOpaque();
  protocol::appendStore(pending, Opcode::kSet, prepare, 0, "busy", "v", durable(10'000));
  ASSERT_TRUE(writer.sendRaw(pending).ok());
  auto plain = clientWith(server, no_xerror);
  ASSERT_EQ(plain.selectBucket("default")->status, Status::kSuccess);
  ASSERT_TRUE(testing::eventually([&] {
    auto answer = plain.set(0, "busy", "second");
    return answer.ok() && answer->status == Status::kEtmpfail;
  }));
  auto extended = clientWith(server, with_xerror);
  ASSERT_EQ(extended.selectBucket("default")->status, Status::kSuccess);
  EXPECT_EQ(extended.set(0, "busy", "second")->status, Status::kSyncWriteInProgress);

  // A durable write that times out: SyncWriteAmbiguous, or a closed connection.
  auto ambiguous = extended.set(0, "timeout", "v", durable(100));
  ASSERT_TRUE(ambiguous.ok());
  EXPECT_EQ(ambiguous->status, Status::kSyncWriteAmbiguous);
  std::string write;
  protocol::appendStore(write, Opcode::kSet, plain.nextOpaque(), 0, "plain-timeout", "v",
                        durable(100));
  ASSERT_TRUE(plain.sendRaw(write).ok());
  const absl::Status closed = plain.waitForClose();
  EXPECT_TRUE(closed.ok()) << "a client without XERROR was sent SyncWriteAmbiguous: " << closed;

  // An invalid durability level (refused by the parser).
  std::string frames;
  frames.push_back(static_cast<char>(0x11));  // frame id 1, length 1
  frames.push_back(static_cast<char>(9));     // level 9
  const std::string extras = setExtras();
  auto refused = call(extended, {.opcode = Opcode::kSet,
                                 .framing_extras = frames,
                                 .extras = extras,
                                 .key = "k",
                                 .value = "v"});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kDurabilityInvalidLevel);
  auto plain_level = clientWith(server, no_xerror);
  ASSERT_TRUE(plain_level
                  .send({.opcode = Opcode::kSet,
                         .opaque = 1,
                         .framing_extras = frames,
                         .extras = extras,
                         .key = "k",
                         .value = "v"})
                  .ok());
  EXPECT_TRUE(plain_level.waitForClose().ok());

  // No bucket selected.
  auto unselected = clientWith(server, with_xerror);
  EXPECT_EQ(unselected.get(0, "k")->status, Status::kNoBucket);
  auto plain_unselected = clientWith(server, std::nullopt);
  ASSERT_TRUE(plain_unselected.send({.opcode = Opcode::kGet, .opaque = 1, .key = "k"}).ok());
  EXPECT_TRUE(plain_unselected.waitForClose().ok());

  // The server kept serving everyone else.
  EXPECT_EQ(extended.noop()->status, Status::kSuccess);
}

TEST(ServerFidelity, RefusalsBeforeAuthenticationDisconnectAClientWithoutXerror) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"default_bucket": "default",
      "users": {"u": {"password": "p"}}, "buckets": {"default": {}}})"));
  auto extended = clientWith(server, std::vector<Feature>{Feature::kXerror});
  EXPECT_EQ(extended.set(0, "k", "v")->status, Status::kNoAccess);
  auto plain = clientWith(server, std::nullopt);
  ASSERT_TRUE(plain.send({.opcode = Opcode::kNoop, .opaque = 1}).ok());  // needs no auth
  ASSERT_EQ(plain.readResponse()->status, Status::kSuccess);
  ASSERT_TRUE(plain.send({.opcode = Opcode::kGet, .opaque = 2, .key = "k"}).ok());
  EXPECT_TRUE(plain.waitForClose().ok());
}

// The attributes of kv_engine's etc/couchbase/kv/error_maps/error_map_v2.json
// (revision 9) for every status the server lists, and its versions: 0 does
// not exist (KeyNotFound), 1 is revision 13, above 2 is 2.
TEST(ServerFidelity, ErrorMapCarriesKvEnginesAttributesAndVersions) {
  ServerProcess server;
  ASSERT_TRUE(server.start());
  auto client = clientWith(server, std::vector<Feature>{Feature::kXerror});
  const auto mapOf = [&](uint16_t version) {
    std::string value;
    protocol::wire::append16(value, version);
    return call(client, {.opcode = Opcode::kGetErrorMap, .value = value});
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected{
      {"0", {"success"}},
      {"1", {"item-only"}},
      {"2", {"item-only"}},
      {"3", {"item-only", "invalid-input"}},
      {"4", {"internal", "invalid-input"}},
      {"5", {"internal", "item-only"}},
      {"6", {"item-only", "invalid-input"}},
      {"7", {"fetch-config", "invalid-input"}},
      {"8", {"conn-state-invalidated"}},
      {"20", {"conn-state-invalidated", "auth"}},
      {"21", {"special-handling"}},
      {"23", {"dcp", "special-handling"}},
      {"24", {"support"}},
      {"81", {"support"}},
      {"82", {"temp", "retry-later"}},
      {"83", {"support"}},
      {"84", {"internal", "conn-state-invalidated"}},
      {"85", {"temp", "retry-now"}},
      {"86", {"temp", "retry-now"}},
      {"87", {"invalid-input"}},
      {"a0", {"invalid-input"}},
      {"a1", {"item-only", "invalid-input"}},
      {"a2", {"item-only", "retry-later"}},
      {"a3", {"item-only"}},
      {"a4", {"item-only", "retry-later"}},
      {"c0", {"subdoc", "item-only"}},
      {"c1", {"subdoc", "item-only"}},
      {"c2", {"subdoc", "invalid-input"}},
      {"c3", {"subdoc", "invalid-input"}},
      {"c4", {"subdoc", "invalid-input"}},
      {"c5", {"subdoc", "invalid-input"}},
      {"c6", {"subdoc", "item-only"}},
      {"c7", {"subdoc", "item-only"}},
      {"c8", {"subdoc", "item-only"}},
      {"c9", {"subdoc", "item-only"}},
      {"ca", {"subdoc", "invalid-input", "item-only"}},
      {"cb", {"subdoc", "invalid-input"}},
      {"cc", {"subdoc", "special-handling"}},
      {"cd", {"item-deleted", "success", "subdoc"}},
      {"ce", {"subdoc", "invalid-input"}},
      {"cf", {"subdoc", "invalid-input"}},
      {"d0", {"subdoc", "invalid-input"}},
      {"d1", {"subdoc", "invalid-input"}},
      {"d2", {"subdoc", "invalid-input"}},
      {"d3", {"item-deleted", "subdoc", "special-handling"}},
      {"d4", {"subdoc", "invalid-input"}},
      {"d5", {"subdoc", "invalid-input"}},
      {"d6", {"subdoc", "item-only"}},
  };
  for (const uint16_t version : {1, 2, 7}) {
    auto map = mapOf(version);
    ASSERT_TRUE(map.ok());
    ASSERT_EQ(map->status, Status::kSuccess) << "version " << version;
    const auto json = nlohmann::json::parse(map->value);
    EXPECT_EQ(json["version"], version == 1 ? 1 : 2);
    EXPECT_EQ(json["revision"], version == 1 ? 13 : 9);
    EXPECT_EQ(json["errors"].size(), expected.size());
    for (const auto& [code, attrs] : expected) {
      ASSERT_TRUE(json["errors"].contains(code)) << code;
      EXPECT_EQ(json["errors"][code]["attrs"].get<std::vector<std::string>>(), attrs) << code;
    }
  }
  auto none = mapOf(0);
  ASSERT_TRUE(none.ok());
  expectNoBody(*none, Status::kKeyNotFound);
}

// kv_engine refuses a datatype the connection did not negotiate (Einval,
// McbpValidator::verify_header) and decides JSON itself from the value.
TEST(ServerFidelity, TheStoredDatatypeIsDetectedAndJsonMustBeNegotiated) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kDefaultBucket)));
  const std::string extras = setExtras();
  auto plain = clientWith(server, std::vector<Feature>{Feature::kXerror});
  auto refused = call(plain, {.opcode = Opcode::kSet,
                              .datatype = protocol::kDatatypeJson,
                              .extras = extras,
                              .key = "doc",
                              .value = "{}"});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kEinval);
  EXPECT_EQ(refused->errorContext(), "Datatype (JSON) not enabled for the connection");
  EXPECT_EQ(plain.get(0, "doc")->status, Status::kKeyNotFound);  // nothing stored

  auto client = clientWith(server, std::vector<Feature>{Feature::kXerror, Feature::kJson});
  const auto storedDatatype = [&](std::string_view key) {
    auto got = client.get(0, key);
    EXPECT_TRUE(got.ok() && got->status == Status::kSuccess);
    return got.ok() ? got->datatype : uint8_t{0xff};
  };
  struct Case {
    std::string key;
    uint8_t sent;
    std::string value;
    uint8_t stored;
  };
  const std::vector<Case> cases{
      {"json-sent-raw", protocol::kDatatypeRaw, R"({"a": [1, 2.5, "x"]})", protocol::kDatatypeJson},
      {"text-sent-json", protocol::kDatatypeJson, "not json", protocol::kDatatypeRaw},
      {"number", protocol::kDatatypeRaw, " 42 ", protocol::kDatatypeJson},
      {"truncated", protocol::kDatatypeJson, R"({"a": )", protocol::kDatatypeRaw},
      {"bad-utf8", protocol::kDatatypeRaw, "\"\xff\"", protocol::kDatatypeRaw},
      {"empty", protocol::kDatatypeRaw, "", protocol::kDatatypeRaw},
  };
  for (const Case& c : cases) {
    auto set = call(client, {.opcode = Opcode::kSet,
                             .datatype = c.sent,
                             .extras = extras,
                             .key = c.key,
                             .value = c.value});
    ASSERT_TRUE(set.ok());
    ASSERT_EQ(set->status, Status::kSuccess) << c.key;
    EXPECT_EQ(storedDatatype(c.key), c.stored) << c.key;
  }
  // APPEND/PREPEND: the joined value decides.
  ASSERT_EQ(client.set(0, "joined", "[1")->status, Status::kSuccess);
  EXPECT_EQ(storedDatatype("joined"), protocol::kDatatypeRaw);
  ASSERT_EQ(call(client, {.opcode = Opcode::kAppend, .key = "joined", .value = ",2]"})->status,
            Status::kSuccess);
  EXPECT_EQ(storedDatatype("joined"), protocol::kDatatypeJson);
  ASSERT_EQ(call(client, {.opcode = Opcode::kPrepend, .key = "joined", .value = "x"})->status,
            Status::kSuccess);
  EXPECT_EQ(storedDatatype("joined"), protocol::kDatatypeRaw);
  // A counter is JSON, created or updated.
  const std::string counter = counterExtras(1, 5);
  ASSERT_EQ(call(client, {.opcode = Opcode::kIncrement, .extras = counter, .key = "n"})->status,
            Status::kSuccess);
  EXPECT_EQ(storedDatatype("n"), protocol::kDatatypeJson);
  ASSERT_EQ(client.set(0, "m", "7 apples")->status, Status::kSuccess);
  ASSERT_EQ(call(client, {.opcode = Opcode::kIncrement, .extras = counter, .key = "m"})->status,
            Status::kSuccess);
  EXPECT_EQ(storedDatatype("m"), protocol::kDatatypeJson);
}

// kv_engine closes a connection whose request header says its framing
// extras, extras and key are longer than its body (cb::mcbp::Header::isValid),
// without an answer; the answers before it still leave.
TEST(ServerFidelity, SectionsLongerThanTheBodyCloseTheConnection) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kDefaultBucket)));
  const auto header = [](uint8_t magic, uint8_t framing, uint16_t key, uint8_t extras,
                         uint32_t body) {
    std::string bytes(protocol::kHeaderSize, '\0');
    bytes[0] = static_cast<char>(magic);
    bytes[1] = static_cast<char>(Opcode::kSet);
    if (magic == 0x08) {
      bytes[2] = static_cast<char>(framing);
      bytes[3] = static_cast<char>(key);
    } else {
      bytes[2] = static_cast<char>(key >> 8);
      bytes[3] = static_cast<char>(key & 0xff);
    }
    bytes[4] = static_cast<char>(extras);
    bytes[8] = static_cast<char>(body >> 24);
    bytes[9] = static_cast<char>(body >> 16);
    bytes[10] = static_cast<char>(body >> 8);
    bytes[11] = static_cast<char>(body);
    return bytes + std::string(body, 'x');
  };
  struct Case {
    const char* name;
    std::string request;
  };
  const std::vector<Case> cases{
      {"extras + key over the body", header(0x80, 0, 10, 8, 12)},
      {"framing extras past the body", header(0x08, 20, 1, 0, 4)},
      {"framing extras + extras + key", header(0x08, 3, 2, 8, 12)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto client = clientWith(server, std::vector<Feature>{Feature::kXerror});
    std::string batch;
    const uint32_t noop = client.nextOpaque();
    protocol::appendSimple(batch, Opcode::kNoop, noop);
    batch += c.request;
    protocol::appendSimple(batch, Opcode::kNoop, client.nextOpaque());
    ASSERT_TRUE(client.sendRaw(batch).ok());
    ASSERT_NO_FATAL_FAILURE(testing::readAnswer(client, noop, Status::kSuccess));
    EXPECT_TRUE(client.waitForClose().ok()) << "the stream was read on past a bad header";
  }
  auto other = clientWith(server, std::nullopt);
  EXPECT_EQ(other.set(0, "k", "v")->status, Status::kSuccess);
}

// INCREMENT reads the stored value as kv_engine's safe_strtoull does
// (utilities/util.cc): leading whitespace and one '+' skipped; the digits
// end the text or whitespace follows them; no '-', no overflow.
TEST(ServerFidelity, CountersParseAsKvEnginesSafeStrtoull) {
  ServerProcess server;
  ASSERT_TRUE(server.start(std::string(kDefaultBucket)));
  auto client = clientWith(server, std::vector<Feature>{Feature::kXerror});
  struct Case {
    std::string stored;
    std::optional<uint64_t> incremented;  // nullopt: DeltaBadval
  };
  const std::vector<Case> cases{
      {"41", 42},
      {"  41", 42},
      {"\t\n41", 42},
      {"+41", 42},
      {"41 ", 42},
      {"41\napples", 42},
      {"41 apples", 42},
      {"18446744073709551615", 0},  // wraps at 2^64
      {"", std::nullopt},
      {" ", std::nullopt},
      {"+", std::nullopt},
      {"++41", std::nullopt},
      {"-1", std::nullopt},
      {"41apples", std::nullopt},
      {"0x29", std::nullopt},
      {"18446744073709551616", std::nullopt},
  };
  const std::string extras = counterExtras(1, 0);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string key = "counter-" + std::to_string(i);
    ASSERT_EQ(client.set(0, key, c.stored)->status, Status::kSuccess);
    auto answer = call(client, {.opcode = Opcode::kIncrement, .extras = extras, .key = key});
    ASSERT_TRUE(answer.ok());
    if (!c.incremented) {
      EXPECT_EQ(answer->status, Status::kDeltaBadval) << '"' << c.stored << '"';
      continue;
    }
    ASSERT_EQ(answer->status, Status::kSuccess) << '"' << c.stored << '"';
    ASSERT_EQ(answer->value.size(), 8u);
    EXPECT_EQ(protocol::wire::load64(answer->value), *c.incremented) << '"' << c.stored << '"';
  }
}

// kv_engine's select_bucket: KeyNotFound once the user may access the
// bucket's name (a user without a "buckets" list may access every one).
TEST(ServerFidelity, SelectingABucketThatDoesNotExistIsKeyNotFound) {
  ServerProcess server;
  ASSERT_TRUE(
      server.start(R"({"users": {"alice": {"password": "s3cret"}}, "buckets": {"default": {}}})"));
  auto client = clientWith(server, std::vector<Feature>{Feature::kXerror});
  EXPECT_EQ(client.selectBucket("nope")->status, Status::kNoAccess);  // not authenticated
  ASSERT_EQ(client.saslPlain("alice", "s3cret")->status, Status::kSuccess);
  auto missing = client.selectBucket("nope");
  ASSERT_TRUE(missing.ok());
  expectNoBody(*missing, Status::kKeyNotFound);
  EXPECT_EQ(client.selectBucket("default")->status, Status::kSuccess);
}

// A user limited to some buckets ("buckets" in the users config) is
// answered NoAccess for every other name, existing or not, as kv_engine
// answers a user without the privilege; and works in default_bucket only if
// it may access it.
TEST(ServerFidelity, AUserLimitedToSomeBucketsIsRefusedTheOthers) {
  ServerProcess server;
  ASSERT_TRUE(server.start(R"({"default_bucket": "other",
      "users": {"admin": {"password": "a"}, "app": {"password": "b", "buckets": ["default"]}},
      "buckets": {"default": {}, "other": {}}})"));
  auto app = clientWith(server, std::vector<Feature>{Feature::kXerror});
  ASSERT_EQ(app.saslPlain("app", "b")->status, Status::kSuccess);
  EXPECT_EQ(app.get(0, "k")->status, Status::kNoBucket);  // default_bucket "other" is not its
  for (const char* name : {"nope", "other"}) {
    auto refused = app.selectBucket(name);
    ASSERT_TRUE(refused.ok());
    expectNoBody(*refused, Status::kNoAccess);
  }
  EXPECT_EQ(app.selectBucket("default")->status, Status::kSuccess);
  EXPECT_EQ(app.set(0, "k", "v")->status, Status::kSuccess);

  auto admin = clientWith(server, std::vector<Feature>{Feature::kXerror});
  ASSERT_EQ(admin.saslPlain("admin", "a")->status, Status::kSuccess);
  EXPECT_EQ(admin.get(0, "k")->status, Status::kKeyNotFound);  // in "other"
  EXPECT_EQ(admin.selectBucket("nope")->status, Status::kKeyNotFound);
  EXPECT_EQ(admin.selectBucket("other")->status, Status::kSuccess);
}

}  // namespace
}  // namespace syncwrite::server
