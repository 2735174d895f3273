// parseRequest: every request the client encoders build round-trips through
// the server-side parser (malformed requests: protocol_malformed_test.cc).
// Byte layouts are checked against the examples of couchbase/kv_engine
// docs/BinaryProtocol.md and docs/dcp/documentation/commands/seqno-acknowledged.md.
#include "server/protocol/request.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/protocol/frame_info.h"
#include "server/protocol/packet_reader.h"
#include "server/protocol/request_encoder.h"
#include "tests/protocol_test_support.h"

namespace syncwrite::server::protocol {
namespace {

using durability::Level;
using durability::Timeout;
using ::testing::HasSubstr;

using testing::bytesOf;

class CodecTest : public testing::ParsingTest {};

// ---- Round trips: what the client builds, the server reads back. ----

TEST_F(CodecTest, GetMatchesTheDocumentedExample) {
  std::string bytes;
  appendGet(bytes, 0, 0, "Hello");
  EXPECT_EQ(bytes, bytesOf({0x80, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
                            0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0}) +
                       "Hello");
  const ParseResult parsed = parseOk(bytes);
  EXPECT_EQ(parsed.request.opcode, Opcode::kGet);
  EXPECT_EQ(parsed.request.key, "Hello");
  EXPECT_FALSE(parsed.request.durability);
}

TEST_F(CodecTest, AddMatchesTheDocumentedExample) {
  std::string bytes;
  appendStore(bytes, Opcode::kAdd, 0, 0, "Hello", "World", {.flags = 0xdeadbeef, .expiry = 0xe10});
  EXPECT_EQ(bytes, bytesOf({0x80, 0x02, 0x00, 0x05, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                            0x12, 0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                            0,    0,    0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x0e, 0x10}) +
                       "HelloWorld");
  const ParseResult parsed = parseOk(bytes);
  EXPECT_EQ(parsed.request.opcode, Opcode::kAdd);
  EXPECT_EQ(parsed.request.flags, 0xdeadbeefu);
  EXPECT_EQ(parsed.request.expiry, 0xe10u);
  EXPECT_EQ(parsed.request.value, "World");
}

TEST_F(CodecTest, SeqnoAcknowledgedMatchesTheDocumentedExample) {
  std::string bytes;
  appendSeqnoAcknowledged(bytes, 0x1210, 0x0210, 4);
  EXPECT_EQ(bytes, bytesOf({0x80, 0x61, 0x00, 0x00, 0x08, 0x00, 0x02, 0x10, 0x00, 0x00, 0x00,
                            0x08, 0x00, 0x00, 0x12, 0x10, 0,    0,    0,    0,    0,    0,
                            0,    0,    0,    0,    0,    0,    0,    0,    0,    4}));
  const ParseResult parsed = parseOk(bytes);
  EXPECT_EQ(parsed.request.opcode, Opcode::kDcpSeqnoAcknowledged);
  EXPECT_EQ(parsed.request.vbucket, 0x0210);
  EXPECT_EQ(parsed.request.opaque, 0x1210u);
  EXPECT_EQ(parsed.request.prepared_seqno, 4u);
}

TEST_F(CodecTest, DurableSetUsesTheAlternativeMagic) {
  std::string bytes;
  appendStore(bytes, Opcode::kSet, 42, 513, "key", "value",
              {.durability = DurabilitySpec{Level::kPersistToMajority, 1500},
               .cas = 0x0102030405060708,
               .flags = 7,
               .expiry = 9});
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x08);
  EXPECT_EQ(bytes[2], 4);  // one frame: 1 byte id/len + level + 2-byte timeout
  EXPECT_EQ(bytes[3], 3);  // key length, one byte in this layout
  EXPECT_EQ(bytes.substr(24, 4), bytesOf({0x13, 0x03, 0x05, 0xdc}));

  const Request r = parseOk(bytes).request;
  EXPECT_EQ(r.opcode, Opcode::kSet);
  EXPECT_EQ(r.opaque, 42u);
  EXPECT_EQ(r.vbucket, 513);
  EXPECT_EQ(r.cas, 0x0102030405060708u);
  EXPECT_EQ(r.flags, 7u);
  EXPECT_EQ(r.expiry, 9u);
  EXPECT_EQ(r.key, "key");
  EXPECT_EQ(r.value, "value");
  ASSERT_TRUE(r.durability);
  EXPECT_EQ(r.durability->level, Level::kPersistToMajority);
  EXPECT_EQ(r.durability->timeout, *Timeout::fromMillis(1500));
}

TEST_F(CodecTest, DurabilityWithoutTimeoutTakesTheBucketDefault) {
  for (Opcode opcode : {Opcode::kSet, Opcode::kAdd, Opcode::kReplace}) {
    std::string bytes;
    appendStore(bytes, opcode, 1, 0, "k", "v",
                {.durability = DurabilitySpec{Level::kMajorityAndPersistOnMaster, {}}});
    const Request r = parseOk(bytes).request;
    EXPECT_EQ(r.opcode, opcode);
    ASSERT_TRUE(r.durability);
    EXPECT_EQ(r.durability->level, Level::kMajorityAndPersistOnMaster);
    EXPECT_TRUE(r.durability->timeout.isBucketDefault());
  }
}

TEST_F(CodecTest, DurableDelete) {
  std::string bytes;
  appendDelete(bytes, 3, 1023, "gone", {.durability = DurabilitySpec{Level::kMajority, 1}});
  const Request r = parseOk(bytes).request;
  EXPECT_EQ(r.opcode, Opcode::kDelete);
  EXPECT_EQ(r.vbucket, 1023);
  EXPECT_EQ(r.key, "gone");
  ASSERT_TRUE(r.durability);
  EXPECT_EQ(r.durability->timeout, *Timeout::fromMillis(1));
}

TEST_F(CodecTest, LargestTimeoutIsAccepted) {
  std::string bytes;
  appendDelete(bytes, 3, 0, "k", {.durability = DurabilitySpec{Level::kMajority, 0xfffe}});
  EXPECT_EQ(parseOk(bytes).request.durability->timeout, *Timeout::fromMillis(65534));
}

TEST_F(CodecTest, PlainMutationsHaveNoDurability) {
  std::string bytes;
  appendStore(bytes, Opcode::kReplace, 1, 0, "k", "");
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x80);
  const Request r = parseOk(bytes).request;
  EXPECT_FALSE(r.durability);
  EXPECT_EQ(r.value, "");
}

TEST_F(CodecTest, BodylessCommands) {
  for (Opcode opcode : {Opcode::kNoop, Opcode::kVersion, Opcode::kQuit}) {
    std::string bytes;
    appendSimple(bytes, opcode, 77);
    const Request r = parseOk(bytes).request;
    EXPECT_EQ(r.opcode, opcode);
    EXPECT_EQ(r.opaque, 77u);
  }
}

TEST_F(CodecTest, StatWithAndWithoutGroup) {
  std::string general;
  appendStat(general, 1, "");
  EXPECT_EQ(parseOk(general).request.key, "");
  std::string group;
  appendStat(group, 2, "durability");
  EXPECT_EQ(parseOk(group).request.key, "durability");
}

TEST_F(CodecTest, HelloCarriesAgentAndFeatures) {
  const std::vector<Feature> asked{Feature::kXerror, Feature::kSelectBucket,
                                   Feature::kAltRequestSupport, Feature::kSyncReplication};
  std::string bytes;
  appendHello(bytes, 5, "syncwrite-test", asked);
  const Request r = parseOk(bytes).request;
  EXPECT_EQ(r.key, "syncwrite-test");
  EXPECT_EQ(r.value, bytesOf({0x00, 0x07, 0x00, 0x08, 0x00, 0x10, 0x00, 0x11}));
  EXPECT_EQ(decodeFeatures(r.value), asked);
}

TEST_F(CodecTest, HelloAgentMayBeLongerThanAKey) {
  std::string bytes;
  appendHello(bytes, 5, std::string(300, 'a'), {});
  EXPECT_TRUE(parse(bytes).ok());
}

TEST_F(CodecTest, SelectBucket) {
  std::string bytes;
  appendSelectBucket(bytes, 9, "default");
  const Request r = parseOk(bytes).request;
  EXPECT_EQ(r.opcode, Opcode::kSelectBucket);
  EXPECT_EQ(r.key, "default");
}

TEST_F(CodecTest, SetParamEveryType) {
  for (uint32_t type = 1; type <= 6; ++type) {
    std::string bytes;
    appendSetParam(bytes, 4, static_cast<ParamType>(type), "durability_timeout_mode", "polling");
    const Request r = parseOk(bytes).request;
    EXPECT_EQ(r.param_type, static_cast<ParamType>(type));
    EXPECT_EQ(r.key, "durability_timeout_mode");
    EXPECT_EQ(r.value, "polling");
  }
}

TEST_F(CodecTest, SetVbucketEveryState) {
  for (VbucketState state : {VbucketState::kActive, VbucketState::kReplica, VbucketState::kPending,
                             VbucketState::kDead}) {
    std::string bytes;
    appendSetVbucket(bytes, 4, 12, state);
    EXPECT_EQ(bytes[4], 1);  // one byte of extras
    const Request r = parseOk(bytes).request;
    EXPECT_EQ(r.vbucket, 12);
    EXPECT_EQ(r.vbucket_state, state);
  }
}

TEST_F(CodecTest, SetVbucketDeprecatedFourByteState) {
  std::string bytes;
  appendRequest(
      bytes,
      {.opcode = Opcode::kSetVbucket, .opaque = 1, .vbucket = 3, .extras = bytesOf({0, 0, 0, 2})});
  EXPECT_EQ(parseOk(bytes).request.vbucket_state, VbucketState::kReplica);
}

TEST_F(CodecTest, DcpOpenProducer) {
  std::string bytes;
  appendDcpOpen(bytes, 8, "replica1");
  const Request r = parseOk(bytes).request;
  EXPECT_EQ(r.opcode, Opcode::kDcpOpen);
  EXPECT_EQ(r.key, "replica1");
  EXPECT_EQ(r.dcp_flags, kDcpOpenProducer);
  EXPECT_EQ(r.extras.substr(0, 4), bytesOf({0, 0, 0, 0}));
}

TEST_F(CodecTest, GetAllVbSeqnosWithAndWithoutAState) {
  std::string bytes;
  appendGetAllVbSeqnos(bytes, 9, std::nullopt);
  EXPECT_EQ(bytes.size(), size_t{24});
  Request r = parseOk(bytes).request;
  EXPECT_EQ(r.opcode, Opcode::kGetAllVbSeqnos);
  EXPECT_EQ(r.vbucket_state_filter, 0u);
  for (uint32_t state = 0; state <= 4; ++state) {
    bytes.clear();
    appendGetAllVbSeqnos(bytes, 9, state);
    EXPECT_EQ(bytes[4], 4);  // four bytes of extras
    EXPECT_EQ(parseOk(bytes).request.vbucket_state_filter, state);
  }
  bytes.clear();
  appendGetAllVbSeqnos(bytes, 9, 5);
  const ParseResult refused = parse(bytes);
  EXPECT_EQ(refused.status, Status::kEinval);
  EXPECT_THAT(refused.message, HasSubstr("state 5"));
  // kv_engine's 8-byte form adds a collection id: no collections here.
  bytes.clear();
  appendRequest(bytes, {.opcode = Opcode::kGetAllVbSeqnos,
                        .opaque = 9,
                        .extras = bytesOf({0, 0, 0, 1, 0, 0, 0, 8})});
  EXPECT_EQ(parse(bytes).status, Status::kEinval);
}

// The answer's example in kv_engine's docs/dcp/documentation/commands/get_seqno.md:
// four vbuckets, 10 bytes each.
TEST(VbSeqnos, TheDocumentedAnswerParses) {
  const std::string value =
      bytesOf({0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x54, 0x32, 0x00, 0x0d, 0x00, 0x00,
               0x00, 0x00, 0x01, 0x34, 0x32, 0x14, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
               0x00, 0x04, 0x02, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x65, 0x24});
  const auto entries = parseVbSeqnos(value);
  ASSERT_TRUE(entries);
  const std::vector<VbSeqno> expected{{10, 21554}, {13, 20197908}, {127, 4}, {720, 25892}};
  EXPECT_EQ(*entries, expected);
  std::string encoded;
  for (const VbSeqno& entry : expected) appendVbSeqno(encoded, entry);
  EXPECT_EQ(encoded, value);
  EXPECT_FALSE(parseVbSeqnos(value.substr(0, 15))) << "half an entry";
}

TEST_F(CodecTest, ReorderAndTracingFramesAreAcceptedAndIgnored) {
  std::string frames;
  appendFrameInfo(frames, static_cast<uint16_t>(FrameId::kReorder), "");
  appendFrameInfo(frames, static_cast<uint16_t>(FrameId::kOpenTracingContext), "ctx");
  std::string bytes;
  appendRequest(bytes, {.opcode = Opcode::kGet, .opaque = 1, .framing_extras = frames, .key = "k"});
  EXPECT_FALSE(parseOk(bytes).request.durability);
}

TEST_F(CodecTest, DurabilityFrameAfterOtherFrames) {
  std::string frames;
  appendFrameInfo(frames, static_cast<uint16_t>(FrameId::kReorder), "");
  appendDurabilityFrame(frames, Level::kMajority, 100);
  std::string bytes;
  appendRequest(bytes, {.opcode = Opcode::kSet,
                        .opaque = 1,
                        .framing_extras = frames,
                        .extras = std::string(8, '\0'),
                        .key = "k"});
  EXPECT_EQ(parseOk(bytes).request.durability->timeout, *Timeout::fromMillis(100));
}

// The Couchbase C++ SDK appends the frame again when it retries after
// SyncWriteInProgress: a repeated durability frame is accepted, the last wins.
TEST_F(CodecTest, ARepeatedDurabilityFrameIsAcceptedAndTheLastWins) {
  std::string frames;
  appendDurabilityFrame(frames, Level::kMajority, 100);
  appendDurabilityFrame(frames, Level::kPersistToMajority, 200);
  std::string bytes;
  appendRequest(bytes, {.opcode = Opcode::kSet,
                        .opaque = 1,
                        .framing_extras = frames,
                        .extras = std::string(8, '\0'),
                        .key = "k"});
  const Request r = parseOk(bytes).request;
  ASSERT_TRUE(r.durability);
  EXPECT_EQ(r.durability->level, Level::kPersistToMajority);
  EXPECT_EQ(r.durability->timeout, *Timeout::fromMillis(200));
}

TEST(FrameInfoTest, EscapedIdAndLengthRoundTrip) {
  std::string section;
  appendFrameInfo(section, 20, std::string(20, 'x'));
  appendFrameInfo(section, 15, "");
  appendFrameInfo(section, 1, std::string(14, 'y'));
  EXPECT_EQ(static_cast<uint8_t>(section[0]), 0xff);  // both nibbles escaped
  EXPECT_EQ(section[1], 5);                           // id 15 + 5
  EXPECT_EQ(section[2], 5);                           // length 15 + 5

  FrameInfoReader reader(section);
  auto a = reader.next();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->id, 20);
  EXPECT_EQ(a->data, std::string(20, 'x'));
  auto b = reader.next();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->id, 15);
  EXPECT_EQ(b->data, "");
  auto c = reader.next();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, 1);
  EXPECT_EQ(c->data.size(), 14u);
  EXPECT_FALSE(reader.next());
  EXPECT_FALSE(reader.malformed());
}

}  // namespace
}  // namespace syncwrite::server::protocol
