#include "server/protocol/packet_reader.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <optional>

namespace syncwrite::server::protocol {

PacketReader::PacketReader(Direction direction, size_t max_packet_size)
    : direction_(direction), max_packet_size_(max_packet_size) {}

void PacketReader::reserveTail(size_t min_size) {
  if (begin_ == end_ && buffer_.size() > kBufferBytes && min_size <= kBufferBytes) {
    // Empty after a large packet: give the rest back.
    begin_ = end_ = 0;
    std::string(kBufferBytes, '\0').swap(buffer_);
  }
  if (buffer_.size() - end_ >= min_size) return;
  // Reclaim the consumed prefix first: it may be enough on its own.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() - end_ >= min_size) return;
  }
  // Geometric growth: amortised O(1) per byte, no allocation per feed.
  buffer_.resize(std::max({buffer_.size() * 2, end_ + min_size, kBufferBytes}));
}

void PacketReader::feed(std::string_view bytes) {
  if (bytes.empty()) return;
  reserveTail(bytes.size());
  std::memcpy(buffer_.data() + end_, bytes.data(), bytes.size());
  end_ += bytes.size();
}

std::span<char> PacketReader::prepare(size_t min_size) {
  reserveTail(std::max<size_t>(min_size, 1));
  return {buffer_.data() + end_, buffer_.size() - end_};
}

void PacketReader::commit(size_t written) {
  assert(written <= buffer_.size() - end_);
  end_ += written;
}

PacketReader::Next PacketReader::next() {
  Next out;
  if (error_ != Result::kNeedMore) {
    out.result = error_;
    out.header = error_header_;
    return out;
  }
  if (begin_ == end_) {
    begin_ = end_ = 0;  // empty: restart at the front for free
    return out;
  }
  // Magic is checked on the first byte, before a whole header is buffered,
  // so garbage is refused as soon as it arrives.
  const uint8_t magic = static_cast<uint8_t>(buffer_[begin_]);
  const bool request = magic == static_cast<uint8_t>(Magic::kClientRequest) ||
                       magic == static_cast<uint8_t>(Magic::kAltClientRequest);
  const bool response = magic == static_cast<uint8_t>(Magic::kClientResponse) ||
                        magic == static_cast<uint8_t>(Magic::kAltClientResponse);
  const bool accepted = direction_ == Direction::kRequests    ? request
                        : direction_ == Direction::kResponses ? response
                                                              : request || response;
  if (!accepted) {
    error_ = Result::kBadMagic;
    error_header_ = Header{};
    error_header_.magic = magic;
    out.result = error_;
    out.header = error_header_;
    return out;
  }
  const size_t available = end_ - begin_;
  if (available < kHeaderSize) return out;
  const std::string_view unread(buffer_.data() + begin_, available);
  const Header header = decodeHeader(unread);
  if (!header.sectionsFit()) {
    // As kv_engine (cb::mcbp::Header::isValid): the stream cannot be framed
    // with confidence any more, so it ends here, before the body arrives.
    error_ = Result::kBadLengths;
    error_header_ = header;
    out.result = error_;
    out.header = header;
    return out;
  }
  if (header.body_length > max_packet_size_) {
    error_ = Result::kTooBig;
    error_header_ = header;
    out.result = error_;
    out.header = header;
    return out;
  }
  const size_t total = kHeaderSize + size_t{header.body_length};
  if (available < total) return out;

  const std::string_view bytes = unread.substr(0, total);
  begin_ += total;
  out.header = header;
  // The sections fit (checked above), so the split succeeds.
  if (std::optional<Packet> packet = splitPacket(bytes)) out.packet = *packet;
  out.result = Result::kPacket;
  return out;
}

}  // namespace syncwrite::server::protocol
