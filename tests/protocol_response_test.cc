// Response encoding (server side) read back as the client reads it, HELLO
// negotiation, the vocabulary's names, and the vbucket of a key.
#include "server/protocol/response_encoder.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/packet_reader.h"
#include "server/protocol/response.h"
#include "server/protocol/vbucket_hash.h"
#include "tests/protocol_test_support.h"

namespace syncwrite::server::protocol {
namespace {

using testing::bytesOf;

std::vector<Response> readAll(const std::string& bytes) {
  PacketReader reader(PacketReader::Direction::kResponses);
  reader.feed(bytes);
  std::vector<Response> out;
  for (auto next = reader.next(); next.result == PacketReader::Result::kPacket;
       next = reader.next()) {
    out.push_back(Response::fromPacket(next.packet));
  }
  EXPECT_EQ(reader.buffered(), 0u);
  return out;
}

TEST(ResponseEncoderTest, StatResponseMatchesTheDocumentedExample) {
  std::string bytes;
  appendStatResponse(bytes, 0, "pid", "3078");
  EXPECT_EQ(bytes, bytesOf({0x81, 0x10, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
                            0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0}) +
                       "pid3078");
}

TEST(ResponseEncoderTest, StatSequenceEndsWithAnEmptyResponse) {
  std::string bytes;
  appendStatResponse(bytes, 9, "sync_writes_in_flight", "3");
  appendStatResponse(bytes, 9, "durability_timeout_mode", "event-driven");
  appendStatEnd(bytes, 9);
  const std::vector<Response> responses = readAll(bytes);
  ASSERT_EQ(responses.size(), 3u);
  EXPECT_EQ(responses[0].key, "sync_writes_in_flight");
  EXPECT_EQ(responses[0].value, "3");
  EXPECT_EQ(responses[1].value, "event-driven");
  for (const Response& r : responses) {
    EXPECT_EQ(r.opcode, Opcode::kStat);
    EXPECT_EQ(r.opaque, 9u);
    EXPECT_TRUE(r.ok());
  }
  EXPECT_TRUE(responses[2].key.empty());
  EXPECT_TRUE(responses[2].value.empty());
}

TEST(ResponseEncoderTest, HelloNegotiatesWhatTheServerSupports) {
  std::string asked;
  appendFeatures(asked, std::vector<Feature>{Feature::kTls, Feature::kSyncReplication,
                                             Feature::kXerror, Feature::kSyncReplication,
                                             Feature::kSnappy, Feature::kAltRequestSupport,
                                             Feature::kSelectBucket, Feature::kCollections});
  const std::vector<Feature> agreed = negotiateFeatures(asked);
  EXPECT_EQ(agreed, (std::vector<Feature>{Feature::kSyncReplication, Feature::kXerror,
                                          Feature::kAltRequestSupport, Feature::kSelectBucket}));

  std::string bytes;
  appendHelloResponse(bytes, 3, agreed);
  EXPECT_EQ(bytes.substr(24), bytesOf({0x00, 0x11, 0x00, 0x07, 0x00, 0x10, 0x00, 0x08}));
  const std::vector<Response> responses = readAll(bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].opcode, Opcode::kHello);
  EXPECT_EQ(decodeFeatures(responses[0].value), agreed);
}

TEST(ResponseEncoderTest, HelloWithNothingSupportedAgreesToNothing) {
  std::string asked;
  appendFeatures(asked, std::vector<Feature>{Feature::kTls, Feature::kSnappy});
  EXPECT_TRUE(negotiateFeatures(asked).empty());
  EXPECT_TRUE(negotiateFeatures("").empty());
}

TEST(ResponseEncoderTest, MutationSuccessCarriesTheCas) {
  std::string bytes;
  appendStatusResponse(bytes, Opcode::kSet, Status::kSuccess, 11, 0x1122334455667788);
  const std::vector<Response> responses = readAll(bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].cas, 0x1122334455667788u);
  EXPECT_EQ(responses[0].opaque, 11u);
  EXPECT_EQ(bytes.size(), kHeaderSize);
}

TEST(ResponseEncoderTest, GetHitHasFlagsValueAndCas) {
  std::string bytes;
  appendGetResponse(bytes, 4, 99, 0xdeadbeef, "World");
  const std::vector<Response> responses = readAll(bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].extras, bytesOf({0xde, 0xad, 0xbe, 0xef}));
  EXPECT_EQ(responses[0].value, "World");
  EXPECT_EQ(responses[0].cas, 99u);
}

TEST(ResponseEncoderTest, ErrorCarriesItsContextAsJson) {
  std::string bytes;
  appendErrorResponse(bytes, Opcode::kSetParam, Status::kEinval, 8,
                      "durability_timeout_mode: \"sometimes\" is not one of [\"event-driven\"]");
  const std::vector<Response> responses = readAll(bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, Status::kEinval);
  EXPECT_EQ(responses[0].datatype, 0x01);
  EXPECT_EQ(responses[0].errorContext(),
            "durability_timeout_mode: \"sometimes\" is not one of [\"event-driven\"]");
}

TEST(ResponseEncoderTest, ErrorWithoutMessageHasNoBody) {
  std::string bytes;
  appendErrorResponse(bytes, Opcode::kGet, Status::kKeyNotFound, 8, "");
  EXPECT_EQ(bytes.size(), kHeaderSize);
  EXPECT_EQ(readAll(bytes)[0].errorContext(), "");
}

TEST(ResponseEncoderTest, NonJsonValueIsItsOwnContext) {
  Response r;
  r.value = "Not found";
  EXPECT_EQ(r.errorContext(), "Not found");
  r.value = R"({"other":1})";
  EXPECT_EQ(r.errorContext(), R"({"other":1})");
}

TEST(ResponseEncoderTest, ParseErrorIsAnsweredWithTheRequestsOpcodeAndOpaque) {
  ParseResult refused;
  refused.status = Status::kDurabilityInvalidLevel;
  refused.message = "invalid durability level 9";
  refused.request.opcode = Opcode::kReplace;
  refused.request.opaque = 0xfeed;
  std::string bytes;
  appendParseError(bytes, refused);
  const Response r = readAll(bytes).at(0);
  EXPECT_EQ(r.opcode, Opcode::kReplace);
  EXPECT_EQ(r.opaque, 0xfeedu);
  EXPECT_EQ(r.status, Status::kDurabilityInvalidLevel);
  EXPECT_EQ(r.errorContext(), "invalid durability level 9");
}

TEST(ResponseEncoderTest, VersionAnswer) {
  std::string bytes;
  appendVersionResponse(bytes, 1, "0.1.0");
  EXPECT_EQ(readAll(bytes).at(0).value, "0.1.0");
}

TEST(VocabularyTest, StatusNamesAndValues) {
  EXPECT_EQ(static_cast<uint16_t>(Status::kSyncWriteAmbiguous), 0xa3);
  EXPECT_EQ(toString(Status::kSyncWriteAmbiguous), "SyncWriteAmbiguous");
  EXPECT_EQ(describe(Status::kNotMyVbucket), "not my vbucket");
  EXPECT_EQ(toString(static_cast<Status>(0x4242)), "Unknown");
  EXPECT_EQ(toString(Opcode::kDcpSeqnoAcknowledged), "DCP_SEQNO_ACKNOWLEDGED");
  EXPECT_FALSE(isKnownOpcode(static_cast<Opcode>(0x94)));
  EXPECT_TRUE(isKnownOpcode(Opcode::kSubdocMultiMutation));
  EXPECT_TRUE(isMutation(Opcode::kSubdocCounter));
  EXPECT_FALSE(isMutation(Opcode::kSubdocMultiLookup));
  EXPECT_EQ(toString(Opcode::kSubdocReplaceBodyWithXattr), "SUBDOC_REPLACE_BODY_WITH_XATTR");
  EXPECT_EQ(toString(Status::kSubdocMultiPathFailure), "SubdocMultiPathFailure");
  EXPECT_EQ(unquiet(Opcode::kGetKQ), Opcode::kGetK);
  EXPECT_TRUE(isQuiet(Opcode::kSetQ));
  EXPECT_FALSE(isQuiet(Opcode::kSet));
  EXPECT_TRUE(isMutation(Opcode::kIncrementQ));
  EXPECT_FALSE(isMutation(Opcode::kGetK));
  EXPECT_TRUE(isKnownOpcode(Opcode::kSelectBucket));
  EXPECT_EQ(toString(Opcode::kVerbosity), "VERBOSITY");
  EXPECT_EQ(toString(Opcode::kGatQ), "GATQ");
  EXPECT_TRUE(isQuiet(Opcode::kGatQ));
  EXPECT_EQ(unquiet(Opcode::kGatQ), Opcode::kGat);
  EXPECT_FALSE(isMutation(Opcode::kGatQ));
  EXPECT_EQ(toString(Feature::kSyncReplication), "SyncReplication");
  EXPECT_EQ(vbucketStateFromString("replica"), VbucketState::kReplica);
  EXPECT_FALSE(vbucketStateFromString("gone"));
  EXPECT_FALSE(paramTypeFromWire(7));
}

// Expected values computed with Python's zlib.crc32, independently of the code.
TEST(VbucketHashTest, MatchesCouchbaseClients) {
  EXPECT_EQ(vbucketOfKey("foo"), 115);
  EXPECT_EQ(vbucketOfKey("hello"), 528);
  EXPECT_EQ(vbucketOfKey("key-1"), 748);
  EXPECT_EQ(vbucketOfKey("foo", 64), 51);
  EXPECT_EQ(vbucketOfKey("hello", 64), 16);
  EXPECT_EQ(vbucketOfKey(""), 0);
}

}  // namespace
}  // namespace syncwrite::server::protocol
