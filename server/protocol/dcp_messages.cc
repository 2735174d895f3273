#include "server/protocol/dcp_messages.h"

#include <absl/strings/str_cat.h>

#include "server/protocol/byte_order.h"
#include "server/protocol/request_encoder.h"

namespace syncwrite::server::protocol {
namespace {

constexpr size_t kMarkerV1Extras = 20;
constexpr size_t kMarkerV2Value = 36;
constexpr size_t kMutationExtras = 31;
constexpr size_t kDeletionV1Extras = 18;
constexpr size_t kDeletionV2Extras = 21;
constexpr size_t kPrepareExtras = 31;
constexpr size_t kResolutionExtras = 16;
constexpr uint64_t kRevSeqno = 1;

absl::Status badLayout(const Packet& packet, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(toString(packet.header.opcode)), ": ", std::string(what)));
}

}  // namespace

void appendSnapshotMarker(std::string& out, uint32_t opaque, uint16_t vbucket,
                          const dcp::SnapshotMarker& marker, bool v2) {
  std::string extras;
  std::string value;
  if (v2) {
    wire::append8(extras, 0);  // V2.0
    wire::append64(value, marker.start);
    wire::append64(value, marker.end);
    wire::append32(value, marker.flags);
    wire::append64(value, marker.max_visible_seqno);
    wire::append64(value, marker.high_completed_seqno);
  } else {
    wire::append64(extras, marker.start);
    wire::append64(extras, marker.end);
    wire::append32(extras, marker.flags);
  }
  appendRequest(out, {.opcode = Opcode::kDcpSnapshotMarker,
                      .opaque = opaque,
                      .vbucket = vbucket,
                      .extras = extras,
                      .value = value});
}

void appendStreamItem(std::string& out, uint32_t opaque, uint16_t vbucket,
                      const dcp::StreamItem& item) {
  const vbucket::Item& it = *item.item;
  char extras[kMutationExtras] = {};
  size_t extras_size = 0;
  Opcode opcode = Opcode::kDcpMutation;
  std::string_view value;
  uint64_t cas = it.cas;
  uint8_t datatype = it.meta.datatype;
  switch (item.kind) {
    case dcp::StreamItemKind::kMutation:
    case dcp::StreamItemKind::kPrepare: {
      const bool prepare = item.kind == dcp::StreamItemKind::kPrepare;
      opcode = prepare ? Opcode::kDcpPrepare : Opcode::kDcpMutation;
      wire::store64(extras, item.seqno);
      wire::store64(extras + 8, kRevSeqno);
      wire::store32(extras + 16, it.meta.flags);
      wire::store32(extras + 20, it.meta.expiry);
      // lock time 0; then nmeta (2 bytes) and nru for a mutation, nru,
      // deleted and the level for a prepare.
      if (prepare) {
        extras[29] = static_cast<char>(it.deleted ? 1 : 0);
        extras[30] = static_cast<char>(item.level);
      }
      extras_size = prepare ? kPrepareExtras : kMutationExtras;
      if (!it.deleted) value = it.value();
      break;
    }
    case dcp::StreamItemKind::kDeletion:
      opcode = Opcode::kDcpDeletion;
      wire::store64(extras, item.seqno);
      wire::store64(extras + 8, kRevSeqno);
      extras_size = kDeletionV1Extras;
      datatype = 0;
      break;
    case dcp::StreamItemKind::kCommit:
    case dcp::StreamItemKind::kAbort:
      opcode = item.kind == dcp::StreamItemKind::kCommit ? Opcode::kDcpCommit : Opcode::kDcpAbort;
      wire::store64(extras, item.prepared_seqno);
      wire::store64(extras + 8, item.seqno);
      extras_size = kResolutionExtras;
      cas = 0;
      datatype = 0;
      break;
  }
  appendRequest(out, {.opcode = opcode,
                      .opaque = opaque,
                      .vbucket = vbucket,
                      .cas = cas,
                      .datatype = datatype,
                      .extras = std::string_view(extras, extras_size),
                      .key = it.key(),
                      .value = value});
}

size_t streamItemSize(const dcp::StreamItem& item) noexcept {
  const vbucket::Item& it = *item.item;
  switch (item.kind) {
    case dcp::StreamItemKind::kMutation:
      return kHeaderSize + kMutationExtras + it.key_size + (it.deleted ? 0 : it.value_size);
    case dcp::StreamItemKind::kPrepare:
      return kHeaderSize + kPrepareExtras + it.key_size + (it.deleted ? 0 : it.value_size);
    case dcp::StreamItemKind::kDeletion:
      return kHeaderSize + kDeletionV1Extras + it.key_size;
    case dcp::StreamItemKind::kCommit:
    case dcp::StreamItemKind::kAbort:
      return kHeaderSize + kResolutionExtras + it.key_size;
  }
  return kHeaderSize;
}

void appendStreamEnd(std::string& out, uint32_t opaque, uint16_t vbucket,
                     dcp::StreamEndReason reason) {
  std::string extras;
  wire::append32(extras, static_cast<uint32_t>(reason));
  appendRequest(
      out,
      {.opcode = Opcode::kDcpStreamEnd, .opaque = opaque, .vbucket = vbucket, .extras = extras});
}

std::string encodeFailoverLog(const std::vector<FailoverEntry>& log) {
  std::string out;
  for (const FailoverEntry& e : log) {
    wire::append64(out, e.vbucket_uuid);
    wire::append64(out, e.seqno);
  }
  return out;
}

absl::StatusOr<std::vector<FailoverEntry>> decodeFailoverLog(std::string_view value) {
  if (value.size() % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("failover log of ", value.size(), " bytes: not 16-byte entries"));
  }
  std::vector<FailoverEntry> log;
  for (size_t at = 0; at < value.size(); at += 16) {
    log.push_back({wire::load64(value, at), wire::load64(value, at + 8)});
  }
  return log;
}

absl::StatusOr<DcpMessage> decodeDcpMessage(const Packet& packet) {
  DcpMessage m;
  m.opcode = packet.header.opcode;
  m.vbucket = packet.header.vbucket();
  m.opaque = packet.header.opaque;
  const std::string_view extras = packet.extras;
  dcp::ReceivedItem& item = m.item;
  switch (m.opcode) {
    case Opcode::kDcpSnapshotMarker:
      if (extras.size() == kMarkerV1Extras) {
        m.marker = {.start = wire::load64(extras, 0),
                    .end = wire::load64(extras, 8),
                    .flags = wire::load32(extras, 16)};
      } else if (extras.size() == 1 && extras[0] == 0 && packet.value.size() == kMarkerV2Value) {
        const std::string_view v = packet.value;
        m.marker = {.start = wire::load64(v, 0),
                    .end = wire::load64(v, 8),
                    .flags = wire::load32(v, 16),
                    .max_visible_seqno = wire::load64(v, 20),
                    .high_completed_seqno = wire::load64(v, 28)};
      } else {
        return badLayout(packet, absl::StrCat("extras of ", extras.size(), " bytes and a value of ",
                                              packet.value.size(), " are neither V1 nor V2.0"));
      }
      return m;
    case Opcode::kDcpMutation:
    case Opcode::kDcpPrepare: {
      const bool prepare = m.opcode == Opcode::kDcpPrepare;
      if (extras.size() != (prepare ? kPrepareExtras : kMutationExtras) || packet.key.empty()) {
        return badLayout(packet, absl::StrCat("needs 31 bytes of extras and a key, got ",
                                              extras.size(), " and ", packet.key.size()));
      }
      item.kind = prepare ? dcp::StreamItemKind::kPrepare : dcp::StreamItemKind::kMutation;
      item.seqno = wire::load64(extras, 0);
      item.meta = {.flags = wire::load32(extras, 16),
                   .expiry = wire::load32(extras, 20),
                   .datatype = packet.header.datatype};
      if (prepare) {
        item.deleted = extras[29] != 0;
        const auto level = static_cast<uint8_t>(extras[30]);
        if (level < 1 || level > 3) {
          return badLayout(packet, absl::StrCat("durability level ", level, " is not 1..3"));
        }
        item.level = static_cast<durability::Level>(level);
      }
      break;
    }
    case Opcode::kDcpDeletion:
      if ((extras.size() != kDeletionV1Extras && extras.size() != kDeletionV2Extras) ||
          packet.key.empty()) {
        return badLayout(packet, absl::StrCat("needs 18 or 21 bytes of extras and a key, got ",
                                              extras.size(), " and ", packet.key.size()));
      }
      item.kind = dcp::StreamItemKind::kDeletion;
      item.seqno = wire::load64(extras, 0);
      break;
    case Opcode::kDcpCommit:
    case Opcode::kDcpAbort:
      if (extras.size() != kResolutionExtras || packet.key.empty()) {
        return badLayout(packet, absl::StrCat("needs 16 bytes of extras and a key, got ",
                                              extras.size(), " and ", packet.key.size()));
      }
      item.kind = m.opcode == Opcode::kDcpCommit ? dcp::StreamItemKind::kCommit
                                                 : dcp::StreamItemKind::kAbort;
      item.prepared_seqno = wire::load64(extras, 0);
      item.seqno = wire::load64(extras, 8);
      break;
    case Opcode::kDcpStreamEnd:
      if (extras.size() != 4) {
        return badLayout(packet, absl::StrCat("needs 4 bytes of extras, got ", extras.size()));
      }
      m.end_reason = static_cast<dcp::StreamEndReason>(wire::load32(extras, 0));
      return m;
    default:
      return badLayout(packet, "not a DCP stream message");
  }
  item.key = packet.key;
  item.value = packet.value;
  item.cas = packet.header.cas;
  if (item.seqno == 0) return badLayout(packet, "seqno 0");
  return m;
}

void appendStreamRequest(std::string& out, const StreamRequestFields& r) {
  std::string extras;
  wire::append32(extras, r.flags);
  wire::append32(extras, 0);  // reserved
  wire::append64(extras, r.start_seqno);
  wire::append64(extras, r.end_seqno);
  wire::append64(extras, r.vbucket_uuid);
  wire::append64(extras, r.snap_start_seqno);
  wire::append64(extras, r.snap_end_seqno);
  appendRequest(out, {.opcode = Opcode::kDcpStreamReq,
                      .opaque = r.opaque,
                      .vbucket = r.vbucket,
                      .extras = extras});
}

void appendDcpControl(std::string& out, uint32_t opaque, std::string_view key,
                      std::string_view value) {
  appendRequest(out, {.opcode = Opcode::kDcpControl, .opaque = opaque, .key = key, .value = value});
}

void appendBufferAcknowledgement(std::string& out, uint32_t opaque, uint32_t bytes) {
  std::string extras;
  wire::append32(extras, bytes);
  appendRequest(out,
                {.opcode = Opcode::kDcpBufferAcknowledgement, .opaque = opaque, .extras = extras});
}

}  // namespace syncwrite::server::protocol
