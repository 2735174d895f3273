// parseRequest on malformed requests: every case of issue 6 gets its status
// and a message, and keeps the request's opcode and opaque for the answer.
// Expected statuses follow couchbase/kv_engine docs/BinaryProtocol.md.
#include "server/protocol/request.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/protocol/frame_info.h"
#include "server/protocol/packet_reader.h"
#include "server/protocol/request_encoder.h"
#include "server/protocol/response_encoder.h"
#include "tests/protocol_test_support.h"

namespace syncwrite::server::protocol {
namespace {

using durability::Level;
using durability::Timeout;
using ::testing::HasSubstr;

using testing::bytesOf;

class MalformedRequestTest : public testing::ParsingTest {};

// A SET whose framing extras are `frames`, as raw bytes.
std::string setWithFrames(std::string_view frames, Opcode opcode = Opcode::kSet) {
  std::string bytes;
  const bool store = opcode == Opcode::kSet || opcode == Opcode::kAdd || opcode == Opcode::kReplace;
  appendRequest(bytes, {.opcode = opcode,
                        .opaque = 0xabcd,
                        .framing_extras = frames,
                        .extras = store ? std::string_view("\0\0\0\0\0\0\0\0", 8) : "",
                        .key = "k"});
  return bytes;
}

TEST_F(MalformedRequestTest, UnknownOpcodeKeepsOpcodeAndOpaque) {
  std::string bytes;
  // 0x94, GET_LOCKED, which syncwrite does not implement.
  appendRequest(bytes, {.opcode = static_cast<Opcode>(0x94), .opaque = 0x1234, .key = "c"});
  const ParseResult r = parse(bytes);
  EXPECT_EQ(r.status, Status::kUnknownCommand);
  EXPECT_EQ(static_cast<uint8_t>(r.request.opcode), 0x94);
  EXPECT_EQ(r.request.opaque, 0x1234u);
  EXPECT_THAT(r.message, HasSubstr("0x94"));
  // The answer has no body, as kv_engine's.
  std::string answer;
  appendParseError(answer, r);
  EXPECT_EQ(answer.size(), 24u);
}

// A reserved timeout is 0xa0, as kv_engine answers it (request.cc).
TEST_F(MalformedRequestTest, TimeoutZeroIsDurabilityInvalidLevel) {
  std::string bytes;
  appendStore(bytes, Opcode::kSet, 1, 0, "k", "v",
              {.durability = DurabilitySpec{Level::kMajority, 0}});
  const ParseResult r = parse(bytes);
  EXPECT_EQ(r.status, Status::kDurabilityInvalidLevel);
  EXPECT_THAT(r.message, HasSubstr("timeout 0"));
}

TEST_F(MalformedRequestTest, TimeoutFfffIsDurabilityInvalidLevel) {
  std::string bytes;
  appendDelete(bytes, 1, 0, "k", {.durability = DurabilitySpec{Level::kMajority, 0xffff}});
  const ParseResult r = parse(bytes);
  EXPECT_EQ(r.status, Status::kDurabilityInvalidLevel);
  EXPECT_THAT(r.message, HasSubstr("65535"));
}

TEST_F(MalformedRequestTest, InvalidLevelByteIsDurabilityInvalidLevel) {
  for (int level : {0, 4, 0xff}) {
    std::string bytes;
    appendStore(bytes, Opcode::kSet, 1, 0, "k", "v",
                {.durability = DurabilitySpec{static_cast<Level>(level), 100}});
    const ParseResult r = parse(bytes);
    EXPECT_EQ(r.status, Status::kDurabilityInvalidLevel) << "level " << level;
    EXPECT_EQ(r.request.opaque, 1u);
  }
}

TEST_F(MalformedRequestTest, DurabilityFrameOnANonMutationIsEinval) {
  std::string frame;
  appendDurabilityFrame(frame, Level::kMajority);
  for (Opcode opcode : {Opcode::kGet, Opcode::kNoop, Opcode::kStat, Opcode::kSelectBucket}) {
    std::string bytes;
    const bool keyed = opcode == Opcode::kGet || opcode == Opcode::kSelectBucket;
    appendRequest(
        bytes, {.opcode = opcode, .opaque = 2, .framing_extras = frame, .key = keyed ? "k" : ""});
    const ParseResult r = parse(bytes);
    EXPECT_EQ(r.status, Status::kEinval) << toString(opcode);
    EXPECT_THAT(r.message, HasSubstr("only valid on"));
  }
}

TEST_F(MalformedRequestTest, DurabilityFrameOfWrongLengthIsEinval) {
  for (const std::string& data : {std::string(""), bytesOf({1, 0}), bytesOf({1, 0, 1, 0})}) {
    std::string frames;
    appendFrameInfo(frames, 1, data);
    const ParseResult r = parse(setWithFrames(frames));
    EXPECT_EQ(r.status, Status::kEinval) << data.size() << " bytes";
    EXPECT_THAT(r.message, HasSubstr("1 or 3 bytes"));
  }
}

// A repeated durability frame is accepted (protocol_codec_test.cc), but each
// one is still checked: a bad second frame is refused.
TEST_F(MalformedRequestTest, ABadRepeatedDurabilityFrameIsRefused) {
  std::string frames;
  appendDurabilityFrame(frames, Level::kMajority);
  appendFrameInfo(frames, static_cast<uint16_t>(FrameId::kDurabilityRequirement), "ab");
  EXPECT_EQ(parse(setWithFrames(frames)).status, Status::kEinval);
}

TEST_F(MalformedRequestTest, UnsupportedFrameIdsAreEinval) {
  for (uint16_t id : {2, 4, 14, 15, 200}) {
    std::string frames;
    appendFrameInfo(frames, id, "ab");
    const ParseResult r = parse(setWithFrames(frames));
    EXPECT_EQ(r.status, Status::kEinval) << "id " << id;
    EXPECT_THAT(r.message, HasSubstr("unsupported frame id"));
  }
}

TEST_F(MalformedRequestTest, ReorderFrameWithDataIsEinval) {
  std::string frames;
  appendFrameInfo(frames, 0, "x");
  EXPECT_EQ(parse(setWithFrames(frames)).status, Status::kEinval);
}

TEST_F(MalformedRequestTest, TruncatedFramesAreEinval) {
  const std::vector<std::string> malformed{
      bytesOf({0x13, 0x01}),        // durability, length 3, only 1 byte of data
      bytesOf({0xf1}),              // escaped id, escape byte missing
      bytesOf({0x1f}),              // escaped length, escape byte missing
      bytesOf({0xff, 0x00}),        // both escaped, length escape byte missing
      bytesOf({0x1f, 0x00, 0x01}),  // length 15, 1 byte of data
  };
  for (const std::string& frames : malformed) {
    const ParseResult r = parse(setWithFrames(frames));
    EXPECT_EQ(r.status, Status::kEinval);
    EXPECT_THAT(r.message, HasSubstr("malformed framing extras"));
  }
}

TEST_F(MalformedRequestTest, KeyOver250BytesIsEinval) {
  std::string ok;
  appendStore(ok, Opcode::kSet, 1, 0, std::string(250, 'k'), "v");
  EXPECT_TRUE(parse(ok).ok());
  for (size_t length : {251, 255, 1000}) {
    std::string bytes;
    appendStore(bytes, Opcode::kSet, 1, 0, std::string(length, 'k'), "v");
    const ParseResult r = parse(bytes);
    EXPECT_EQ(r.status, Status::kEinval);
    EXPECT_THAT(r.message, HasSubstr("over the limit of 250"));
  }
  std::string durable;  // the alternative layout too (1-byte key length)
  appendStore(durable, Opcode::kSet, 1, 0, std::string(255, 'k'), "v",
              {.durability = DurabilitySpec{Level::kMajority, {}}});
  EXPECT_EQ(parse(durable).status, Status::kEinval);
}

// Sections longer than the body never reach parseRequest from a connection:
// the PacketReader ends the stream at such a header (kBadLengths, as
// kv_engine's Header::isValid). parseRequest still refuses a Packet built by
// hand with them, keeping the opcode and opaque.
TEST_F(MalformedRequestTest, SectionsExceedingTheBodyEndTheStreamAndAreEinvalToTheParser) {
  for (const bool framing : {false, true}) {
    SCOPED_TRACE(framing ? "framing extras" : "extras");
    std::string bytes;
    if (framing) {
      appendStore(bytes, Opcode::kSet, 6, 0, "k", "", {.durability = DurabilitySpec{}});
      bytes[2] = 100;  // 100 bytes of framing extras claimed
    } else {
      appendGet(bytes, 6, 0, "abc");
      bytes[4] = 8;  // 8 bytes of extras claimed, body is 3
    }
    PacketReader reader(PacketReader::Direction::kRequests);
    reader.feed(bytes);
    EXPECT_EQ(reader.next().result, PacketReader::Result::kBadLengths);

    Packet packet;
    packet.header = decodeHeader(bytes);
    packet.bytes = bytes;
    const ParseResult r = parseRequest(packet);
    EXPECT_EQ(r.status, Status::kEinval);
    EXPECT_EQ(r.request.opaque, 6u);
    EXPECT_THAT(r.message, HasSubstr("exceed the body length"));
  }
}

// Sub-document extras (request.h): 3, 4, 7 or 8 bytes on a single-path
// mutation, 3 or 4 on a lookup, 0 or 1 on MULTI_LOOKUP, 0, 1, 4 or 5 on
// MULTI_MUTATION; the path length within the value; a CAS only on mutations;
// a durability frame only on mutations.
TEST_F(MalformedRequestTest, SubdocExtrasAndPathLengthsAreChecked) {
  const auto parsed = [&](Opcode opcode, std::string_view extras, std::string_view value,
                          uint64_t cas = 0, std::string_view frames = {}) {
    std::string bytes;
    appendRequest(bytes, {.opcode = opcode,
                          .opaque = 3,
                          .cas = cas,
                          .framing_extras = frames,
                          .extras = extras,
                          .key = "k",
                          .value = value});
    return parse(bytes);
  };
  const std::string three = bytesOf({0, 1, 0});
  EXPECT_TRUE(parsed(Opcode::kSubdocGet, three, "a").ok());
  EXPECT_TRUE(parsed(Opcode::kSubdocDictUpsert, bytesOf({0, 1, 0, 0, 0, 0, 9, 1}), "a1").ok());
  const ParseResult upsert =
      parsed(Opcode::kSubdocDictUpsert, bytesOf({0, 1, 1, 0, 0, 0, 9, 2}), "a1");
  EXPECT_EQ(upsert.request.subdoc_path_length, 1);
  EXPECT_EQ(upsert.request.subdoc_path_flags, 1);
  EXPECT_EQ(upsert.request.subdoc_doc_flags, 2);
  EXPECT_TRUE(upsert.request.has_expiry);
  EXPECT_EQ(upsert.request.expiry, 9u);
  EXPECT_EQ(parsed(Opcode::kSubdocGet, bytesOf({0, 1, 0, 0, 0, 0, 9}), "a").status,
            Status::kEinval);
  EXPECT_EQ(parsed(Opcode::kSubdocGet, bytesOf({0, 1}), "a").status, Status::kEinval);
  const ParseResult long_path = parsed(Opcode::kSubdocGet, bytesOf({0, 5, 0}), "a");
  EXPECT_EQ(long_path.status, Status::kEinval);
  EXPECT_THAT(long_path.message, HasSubstr("path length 5"));
  EXPECT_EQ(parsed(Opcode::kSubdocGet, three, "a", 7).status, Status::kEinval);
  EXPECT_TRUE(parsed(Opcode::kSubdocReplace, three, "a1", 7).ok());
  EXPECT_EQ(parsed(Opcode::kSubdocMultiLookup, "ab", "x").status, Status::kEinval);
  EXPECT_TRUE(parsed(Opcode::kSubdocMultiMutation, bytesOf({0, 0, 0, 5, 1}), "x").ok());
  EXPECT_EQ(parsed(Opcode::kSubdocMultiMutation, "ab", "x").status, Status::kEinval);
  std::string frame;
  appendDurabilityFrame(frame, Level::kMajority);
  EXPECT_TRUE(parsed(Opcode::kSubdocMultiMutation, "", "x", 0, frame).ok());
  EXPECT_EQ(parsed(Opcode::kSubdocMultiLookup, "", "x", 0, frame).status, Status::kEinval);
}

TEST_F(MalformedRequestTest, WrongShapesAreEinval) {
  struct Case {
    std::string name;
    RequestFields fields;  // extras come from `extras`
    std::string extras;
  };
  const std::string eight(8, '\0');
  const std::vector<Case> cases{
      {"SET without extras", {.opcode = Opcode::kSet, .key = "k", .value = "v"}, ""},
      {"SET without key", {.opcode = Opcode::kSet}, eight},
      {"GET with extras", {.opcode = Opcode::kGet, .key = "k"}, "abcd"},
      {"GET without key", {.opcode = Opcode::kGet}, ""},
      {"GET with value", {.opcode = Opcode::kGet, .key = "k", .value = "v"}, ""},
      {"DELETE with value", {.opcode = Opcode::kDelete, .key = "k", .value = "v"}, ""},
      {"NOOP with key", {.opcode = Opcode::kNoop, .key = "k"}, ""},
      {"STAT with value", {.opcode = Opcode::kStat, .value = "v"}, ""},
      {"SELECT_BUCKET without key", {.opcode = Opcode::kSelectBucket}, ""},
      {"HELLO with odd value", {.opcode = Opcode::kHello, .key = "a", .value = "abc"}, ""},
      {"SET_PARAM type 0", {.opcode = Opcode::kSetParam, .key = "k"}, bytesOf({0, 0, 0, 0})},
      {"SET_PARAM type 7", {.opcode = Opcode::kSetParam, .key = "k"}, bytesOf({0, 0, 0, 7})},
      {"SET_PARAM without key", {.opcode = Opcode::kSetParam}, bytesOf({0, 0, 0, 1})},
      {"SET_VBUCKET state 0", {.opcode = Opcode::kSetVbucket}, bytesOf({0})},
      {"SET_VBUCKET state 5", {.opcode = Opcode::kSetVbucket}, bytesOf({5})},
      {"SET_VBUCKET 2-byte extras", {.opcode = Opcode::kSetVbucket}, bytesOf({0, 1})},
      {"SET_VBUCKET with key", {.opcode = Opcode::kSetVbucket, .key = "k"}, bytesOf({1})},
      {"DCP_OPEN without name", {.opcode = Opcode::kDcpOpen}, eight},
      {"DCP_OPEN 4-byte extras", {.opcode = Opcode::kDcpOpen, .key = "n"}, bytesOf({0, 0, 0, 1})},
      {"SEQNO_ACK 4-byte extras", {.opcode = Opcode::kDcpSeqnoAcknowledged}, bytesOf({0, 0, 0, 1})},
      {"SEQNO_ACK with key", {.opcode = Opcode::kDcpSeqnoAcknowledged, .key = "k"}, eight},
      {"snappy datatype", {.opcode = Opcode::kGet, .datatype = 0x02, .key = "k"}, ""},
  };
  for (const Case& c : cases) {
    std::string bytes;
    RequestFields fields = c.fields;
    fields.opaque = 0x5151;
    fields.extras = c.extras;
    appendRequest(bytes, fields);
    const ParseResult r = parse(bytes);
    EXPECT_EQ(r.status, Status::kEinval) << c.name;
    EXPECT_EQ(r.request.opaque, 0x5151u) << c.name;
    EXPECT_FALSE(r.message.empty()) << c.name;
  }
}

TEST_F(MalformedRequestTest, JsonDatatypeIsAccepted) {
  std::string bytes;
  appendRequest(bytes, {.opcode = Opcode::kSet,
                        .datatype = 0x01,
                        .extras = std::string(8, '\0'),
                        .key = "k",
                        .value = "{}"});
  EXPECT_EQ(parseOk(bytes).request.datatype, 0x01);
}

}  // namespace
}  // namespace syncwrite::server::protocol
