// DCP on the wire: the messages a producer sends down a stream, encoded and
// decoded, and the requests a consumer sends to open and steer one.
//
// Layouts from couchbase/kv_engine docs/dcp/documentation/commands/ (all
// integers big-endian; every message is a request, magic 0x80, whose opaque
// is the stream's: the STREAM_REQ's opaque):
//   SNAPSHOT_MARKER 0x56  V1: 20-byte extras (start, end, type); V2.0, once
//                         the consumer enabled sync writes: 1-byte extras
//                         (version 0) and a 36-byte value (start, end, type,
//                         max visible seqno, high completed seqno)
//   MUTATION 0x57         31-byte extras (by seqno, rev seqno, flags, expiry,
//                         lock time, nmeta, nru), key, value; CAS and datatype
//                         in the header
//   DELETION 0x58         18-byte extras (by seqno, rev seqno, nmeta), key; 21
//                         bytes (delete time instead of nmeta) also decoded
//   PREPARE 0x60          31-byte extras (by seqno, rev seqno, flags, expiry,
//                         lock time, nru, deleted, durability level), key, value
//   COMMIT 0x62, ABORT 0x63  16-byte extras (prepared seqno, commit/abort seqno), key
//   STREAM_END 0x55       4-byte extras (the reason)
// syncwrite keeps no revision seqno: it sends 1 and ignores what it receives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <absl/status/statusor.h>

#include "dcp/stream_item.h"
#include "server/protocol/packet.h"

namespace syncwrite::server::protocol {

// Producer side: appends one message of stream `opaque` on `vbucket`.
void appendSnapshotMarker(std::string& out, uint32_t opaque, uint16_t vbucket,
                          const dcp::SnapshotMarker& marker, bool v2);
void appendStreamItem(std::string& out, uint32_t opaque, uint16_t vbucket,
                      const dcp::StreamItem& item);
void appendStreamEnd(std::string& out, uint32_t opaque, uint16_t vbucket,
                     dcp::StreamEndReason reason);
// The bytes appendStreamItem() appends for `item`, without building them.
size_t streamItemSize(const dcp::StreamItem& item) noexcept;

// The value of a STREAM_REQ's Success: the failover log, newest first, as
// (vbucket uuid, seqno) pairs of 8 bytes each.
struct FailoverEntry {
  uint64_t vbucket_uuid = 0;
  uint64_t seqno = 0;
};
std::string encodeFailoverLog(const std::vector<FailoverEntry>& log);
absl::StatusOr<std::vector<FailoverEntry>> decodeFailoverLog(std::string_view value);

// Consumer side: a message decoded from a producer's request packet.
struct DcpMessage {
  Opcode opcode = Opcode::kDcpMutation;
  uint16_t vbucket = 0;
  uint32_t opaque = 0;
  dcp::SnapshotMarker marker;                                   // SNAPSHOT_MARKER
  dcp::ReceivedItem item;                                       // MUTATION ... ABORT
  dcp::StreamEndReason end_reason = dcp::StreamEndReason::kOk;  // STREAM_END
};
// Decodes `packet` (a request). InvalidArgument naming the opcode and what
// is wrong for a layout that does not match, or an opcode that is not a
// stream message. The views point into the packet.
absl::StatusOr<DcpMessage> decodeDcpMessage(const Packet& packet);

// Consumer side: requests.
struct StreamRequestFields {
  uint32_t opaque = 0;
  uint16_t vbucket = 0;
  uint32_t flags = 0;
  uint64_t start_seqno = 0;
  uint64_t end_seqno = ~uint64_t{0};  // no end
  uint64_t vbucket_uuid = 0;
  uint64_t snap_start_seqno = 0;
  uint64_t snap_end_seqno = 0;
};
void appendStreamRequest(std::string& out, const StreamRequestFields& request);
void appendDcpControl(std::string& out, uint32_t opaque, std::string_view key,
                      std::string_view value);
void appendBufferAcknowledgement(std::string& out, uint32_t opaque, uint32_t bytes);

}  // namespace syncwrite::server::protocol
