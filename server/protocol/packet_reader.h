// PacketReader: incremental framing of a TCP byte stream into MCBP packets.
//
// The connection appends what it read (feed(), or prepare()+commit() to read
// straight into the reader's buffer), then calls next() until it answers
// kNeedMore. Each kPacket result is one complete packet whose views point into
// the reader's buffer; they stay valid until the next call to feed(),
// prepare(), commit() or next().
//
// Errors end the stream; after one, next() keeps answering it:
//   kBadMagic — byte 0 is not a magic of the expected direction (requests for
//               a server, responses for a client, either for a DCP consumer):
//               close the connection.
//   kBadLengths — the header's framing extras + extras + key exceed its body
//               length: close the connection without an answer, as kv_engine
//               does (cb::mcbp::Header::isValid fails). Detected from the
//               header alone.
//   kTooBig   — the header announces a body over max_packet_size: answer
//               Status::kTooBig (with result.header's opcode and opaque) and
//               close. Detected from the header alone; the body is never
//               buffered.
//
// Never looks at bytes it was not given, never allocates per byte: the buffer
// grows geometrically to the largest burst seen (header + max_packet_size for
// one packet at most), and consumed bytes are reclaimed by moving the unread
// tail (a partial packet) to the front when the free space at the end runs
// short.
//
// Not thread-safe: one reader per connection, used by one thread at a time.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "server/protocol/packet.h"

namespace syncwrite::server::protocol {

class PacketReader {
 public:
  // kBoth: a DCP consumer's connection, which reads the answers to its own
  // requests and the producer's stream messages (requests) interleaved.
  enum class Direction { kRequests, kResponses, kBoth };

  enum class Result {
    kNeedMore,    // no complete packet buffered
    kPacket,      // `packet` holds the next packet
    kBadMagic,    // close the connection
    kBadLengths,  // sections longer than the body: close the connection
    kTooBig,      // answer kTooBig with `header`, then close
  };

  struct Next {
    Result result = Result::kNeedMore;
    Packet packet;  // set for kPacket
    Header header;  // set for kPacket, kBadLengths and kTooBig (the offending header)
  };

  // `max_packet_size` bounds the body (framing extras + extras + key + value),
  // as the server's max_packet_size config key does.
  explicit PacketReader(Direction direction, size_t max_packet_size = size_t{20} * 1024 * 1024);

  // Copies `bytes` to the end of the buffer.
  void feed(std::string_view bytes);

  // The buffer's size while no packet needs more, and the least room a read
  // is given by default. The room is less than the buffer, so that a read
  // that fills the buffer and ends inside a packet does not double it: the
  // partial packet moves to the front and the next read fills the rest.
  // (A connection's buffer is held while it waits for its next request, so
  // its size counts once per connection: docs/memory.md.)
  static constexpr size_t kBufferBytes = size_t{16} * 1024;
  static constexpr size_t kMinReadRoom = size_t{4} * 1024;

  // Zero-copy alternative to feed(): a writable region of at least
  // `min_size` bytes at the end of the buffer; read into it, then commit()
  // the number of bytes actually written. A buffer that grew past
  // kBufferBytes for a large packet goes back to kBufferBytes here once
  // everything in it has been read.
  std::span<char> prepare(size_t min_size = kMinReadRoom);
  void commit(size_t written);

  // The next complete packet, or why there is none. O(1): the buffer is
  // compacted by feed() and prepare(), never here.
  Next next();

  // The bytes fed but not yet returned as packets, for looking ahead at the
  // packets next() will return. Valid until the next call to a non-const
  // member.
  std::string_view unread() const noexcept { return {buffer_.data() + begin_, end_ - begin_}; }

  // Bytes fed but not yet returned as packets.
  size_t buffered() const noexcept { return end_ - begin_; }
  size_t maxPacketSize() const noexcept { return max_packet_size_; }

 private:
  void reserveTail(size_t min_size);

  Direction direction_;
  size_t max_packet_size_;
  std::string buffer_;  // [begin_, end_) holds unread bytes
  size_t begin_ = 0;
  size_t end_ = 0;
  Result error_ = Result::kNeedMore;  // sticky kBadMagic / kBadLengths / kTooBig
  Header error_header_;
};

}  // namespace syncwrite::server::protocol
