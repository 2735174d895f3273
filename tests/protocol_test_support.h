// Shared by the protocol tests: raw bytes from a list, and a fixture that
// frames bytes with a PacketReader and parses the one request in them.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/packet_reader.h"
#include "server/protocol/request.h"

namespace syncwrite::server::protocol::testing {

inline std::string bytesOf(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// Frames `bytes` with a PacketReader (one packet expected) and parses it.
// The bytes are kept alive in `storage_` so the Request's views stay valid.
class ParsingTest : public ::testing::Test {
 protected:
  ParseResult parse(std::string bytes) {
    storage_.push_back(std::move(bytes));
    reader_ = std::make_unique<PacketReader>(PacketReader::Direction::kRequests);
    reader_->feed(storage_.back());
    const auto next = reader_->next();
    EXPECT_EQ(next.result, PacketReader::Result::kPacket);
    EXPECT_EQ(reader_->buffered(), 0u) << "the encoder wrote more than one packet";
    return parseRequest(next.packet);
  }

  ParseResult parseOk(std::string bytes) {
    ParseResult result = parse(std::move(bytes));
    EXPECT_TRUE(result.ok()) << toString(result.status) << ": " << result.message;
    return result;
  }

  std::vector<std::string> storage_;
  std::unique_ptr<PacketReader> reader_;
};

}  // namespace syncwrite::server::protocol::testing
