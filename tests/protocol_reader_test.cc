// PacketReader: framing of a byte stream into packets, byte by byte, many at
// once, and the two errors that end a connection (bad magic, body too big).
#include "server/protocol/packet_reader.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/request_encoder.h"

namespace syncwrite::server::protocol {
namespace {

using Result = PacketReader::Result;

std::string getRequest(uint32_t opaque, std::string_view key) {
  std::string out;
  appendGet(out, opaque, 7, key);
  return out;
}

TEST(PacketReaderTest, EmptyReaderNeedsMore) {
  PacketReader reader(PacketReader::Direction::kRequests);
  EXPECT_EQ(reader.next().result, Result::kNeedMore);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(PacketReaderTest, TruncatedHeaderNeedsMoreUntilComplete) {
  const std::string bytes = getRequest(1, "k");
  PacketReader reader(PacketReader::Direction::kRequests);
  reader.feed(std::string_view(bytes).substr(0, 23));
  EXPECT_EQ(reader.next().result, Result::kNeedMore);
  reader.feed(std::string_view(bytes).substr(23, 1));  // header complete, key missing
  EXPECT_EQ(reader.next().result, Result::kNeedMore);
  reader.feed(std::string_view(bytes).substr(24));
  const auto next = reader.next();
  ASSERT_EQ(next.result, Result::kPacket);
  EXPECT_EQ(next.packet.key, "k");
  EXPECT_EQ(next.header.opaque, 1u);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(PacketReaderTest, PacketsSplitByteByByte) {
  std::string stream;
  for (uint32_t i = 1; i <= 5; ++i) stream += getRequest(i, "key-" + std::to_string(i));
  PacketReader reader(PacketReader::Direction::kRequests);
  std::vector<std::string> keys;
  for (char byte : stream) {
    reader.feed(std::string_view(&byte, 1));
    for (auto next = reader.next(); next.result == Result::kPacket; next = reader.next()) {
      keys.emplace_back(next.packet.key);
    }
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"key-1", "key-2", "key-3", "key-4", "key-5"}));
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(PacketReaderTest, SeveralPacketsInOneFeed) {
  std::string stream;
  appendSimple(stream, Opcode::kNoop, 10);
  appendStore(stream, Opcode::kSet, 11, 3, "k", "value",
              {.durability = DurabilitySpec{durability::Level::kMajority, 500}});
  appendSimple(stream, Opcode::kVersion, 12);
  stream += getRequest(13, "half").substr(0, 10);  // a partial fourth packet

  PacketReader reader(PacketReader::Direction::kRequests);
  reader.feed(stream);
  std::vector<uint32_t> opaques;
  for (auto next = reader.next(); next.result == Result::kPacket; next = reader.next()) {
    opaques.push_back(next.header.opaque);
  }
  EXPECT_EQ(opaques, (std::vector<uint32_t>{10, 11, 12}));
  EXPECT_EQ(reader.buffered(), 10u);  // the partial packet stays buffered
}

TEST(PacketReaderTest, PrepareAndCommitReadInPlace) {
  const std::string bytes = getRequest(99, "in-place");
  PacketReader reader(PacketReader::Direction::kRequests);
  std::span<char> space = reader.prepare(4);
  ASSERT_GE(space.size(), 4u);
  std::copy_n(bytes.data(), 4, space.data());
  reader.commit(4);
  EXPECT_EQ(reader.next().result, Result::kNeedMore);
  space = reader.prepare(bytes.size());
  ASSERT_GE(space.size(), bytes.size() - 4);
  std::copy(bytes.begin() + 4, bytes.end(), space.data());
  reader.commit(bytes.size() - 4);
  const auto next = reader.next();
  ASSERT_EQ(next.result, Result::kPacket);
  EXPECT_EQ(next.packet.key, "in-place");
}

TEST(PacketReaderTest, ManyPacketsReuseTheBuffer) {
  // Consumed bytes are reclaimed: a long stream never needs more than a few
  // packets' worth of buffer.
  PacketReader reader(PacketReader::Direction::kRequests);
  const std::string bytes = getRequest(1, "steady");
  for (int i = 0; i < 10'000; ++i) {
    reader.feed(bytes);
    ASSERT_EQ(reader.next().result, Result::kPacket);
  }
  EXPECT_EQ(reader.buffered(), 0u);
  EXPECT_LE(reader.prepare(1).size(), 64u * 1024);
}

TEST(PacketReaderTest, BadMagicIsDetectedOnTheFirstByteAndSticks) {
  PacketReader reader(PacketReader::Direction::kRequests);
  reader.feed("G");  // "GET / HTTP/1.1"
  auto next = reader.next();
  EXPECT_EQ(next.result, Result::kBadMagic);
  EXPECT_EQ(next.header.magic, 'G');
  reader.feed(getRequest(1, "k"));
  EXPECT_EQ(reader.next().result, Result::kBadMagic);
}

TEST(PacketReaderTest, ResponseMagicIsBadForAServer) {
  PacketReader reader(PacketReader::Direction::kRequests);
  const char response_magic[1] = {static_cast<char>(0x81)};
  reader.feed(std::string_view(response_magic, 1));
  EXPECT_EQ(reader.next().result, Result::kBadMagic);
}

TEST(PacketReaderTest, RequestMagicIsBadForAClient) {
  PacketReader reader(PacketReader::Direction::kResponses);
  reader.feed(getRequest(1, "k"));
  EXPECT_EQ(reader.next().result, Result::kBadMagic);
}

TEST(PacketReaderTest, BadMagicAfterAGoodPacket) {
  PacketReader reader(PacketReader::Direction::kRequests);
  reader.feed(getRequest(1, "k") + "\x42garbage");
  EXPECT_EQ(reader.next().result, Result::kPacket);
  EXPECT_EQ(reader.next().result, Result::kBadMagic);
}

TEST(PacketReaderTest, BodyAtTheLimitIsAccepted) {
  PacketReader reader(PacketReader::Direction::kRequests, /*max_packet_size=*/1024);
  std::string bytes;
  appendStore(bytes, Opcode::kSet, 5, 0, "k", std::string(1024 - 8 - 1, 'x'));
  reader.feed(bytes);
  EXPECT_EQ(reader.next().result, Result::kPacket);
}

TEST(PacketReaderTest, BodyOverTheLimitIsTooBigFromTheHeaderAlone) {
  PacketReader reader(PacketReader::Direction::kRequests, /*max_packet_size=*/1024);
  std::string bytes;
  appendStore(bytes, Opcode::kSet, 77, 0, "k", std::string(1024 - 8, 'x'));
  reader.feed(std::string_view(bytes).substr(0, kHeaderSize));  // the body never arrives
  auto next = reader.next();
  ASSERT_EQ(next.result, Result::kTooBig);
  EXPECT_EQ(next.header.opaque, 77u);  // so the server can answer it
  EXPECT_EQ(next.header.opcode, Opcode::kSet);
  EXPECT_EQ(next.header.body_length, 1025u);
  reader.feed(std::string_view(bytes).substr(kHeaderSize));
  EXPECT_EQ(reader.next().result, Result::kTooBig);
}

TEST(PacketReaderTest, AFullReadEndingInsideAPacketDoesNotGrowTheBuffer) {
  // Reads fill the buffer and end inside a packet, as a pipelining client's
  // stream does: the partial packet moves to the front, the buffer stays
  // kBufferBytes (it is held per connection), and every packet arrives.
  PacketReader reader(PacketReader::Direction::kRequests);
  std::string stream;
  for (uint32_t i = 0; stream.size() < 10 * PacketReader::kBufferBytes; ++i) {
    stream += getRequest(i, "a-key-of-some-length-" + std::to_string(i));
  }
  uint32_t packets = 0;
  for (size_t fed = 0; fed < stream.size();) {
    const std::span<char> space = reader.prepare();
    ASSERT_GE(space.size(), PacketReader::kMinReadRoom);
    EXPECT_EQ(reader.buffered() + space.size(), PacketReader::kBufferBytes);
    const size_t n = std::min(space.size(), stream.size() - fed);
    std::copy_n(stream.data() + fed, n, space.data());
    reader.commit(n);
    fed += n;
    for (auto next = reader.next(); next.result == Result::kPacket; next = reader.next()) {
      EXPECT_EQ(next.packet.header.opaque, packets++);
    }
  }
  EXPECT_GT(packets, 500u);
  EXPECT_EQ(reader.buffered(), 0u);
  EXPECT_EQ(reader.next().result, Result::kNeedMore);
}

TEST(PacketReaderTest, ABufferGrownForALargePacketShrinksOnceRead) {
  PacketReader reader(PacketReader::Direction::kRequests);
  std::string big;
  appendStore(big, Opcode::kSet, 1, 0, "big", std::string(5 * PacketReader::kBufferBytes, 'v'));
  reader.feed(big);
  const auto next = reader.next();
  ASSERT_EQ(next.result, Result::kPacket);
  EXPECT_EQ(next.packet.value.size(), 5 * PacketReader::kBufferBytes);
  EXPECT_EQ(reader.buffered(), 0u);
  EXPECT_EQ(reader.prepare().size(), PacketReader::kBufferBytes);
}

TEST(PacketReaderTest, HugeBodyLengthIsTooBigWithoutAllocating) {
  PacketReader reader(PacketReader::Direction::kRequests);
  std::string header;
  appendGet(header, 1, 0, "k");
  header[8] = header[9] = header[10] = header[11] = static_cast<char>(0xff);
  reader.feed(std::string_view(header).substr(0, kHeaderSize));
  EXPECT_EQ(reader.next().result, Result::kTooBig);
  EXPECT_LE(reader.prepare(1).size(), 64u * 1024);
}

TEST(PacketReaderTest, SectionsLongerThanTheBodyEndTheStreamAtTheHeader) {
  // Key length 10 but body length 3: as kv_engine (Header::isValid), the
  // stream ends there, from the header alone, before the body has arrived;
  // the packet before it is still returned.
  std::string bytes = getRequest(1, "ok");
  std::string bad = getRequest(2, "abc");
  bad[3] = 10;
  bytes += bad.substr(0, kHeaderSize);
  PacketReader reader(PacketReader::Direction::kRequests);
  reader.feed(bytes);
  auto first = reader.next();
  ASSERT_EQ(first.result, Result::kPacket);
  EXPECT_EQ(first.packet.key, "ok");
  auto second = reader.next();
  ASSERT_EQ(second.result, Result::kBadLengths);
  EXPECT_EQ(second.header.key_length, 10u);
  reader.feed(bad.substr(kHeaderSize) + getRequest(3, "next"));
  EXPECT_EQ(reader.next().result, Result::kBadLengths);  // sticky
}

}  // namespace
}  // namespace syncwrite::server::protocol
