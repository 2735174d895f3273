// Values carried in the extras of the administrative commands syncwrite uses.
//
// SET_PARAM (0x82): 4-byte big-endian parameter type; kv_engine's types are
// 1 flush, 2 replication, 3 checkpoint, 4 dcp, 5 vbucket, 6 config; syncwrite
// accepts any of them and treats the key as a config key of the bucket.
// SET_VBUCKET (0x3d): 1-byte state (kv_engine docs/BinaryProtocol.md
// "0x3d Set VBucket"; the deprecated 4-byte form is accepted on parse too).
// DCP_OPEN (0x50): 8 bytes = 4-byte seqno (reserved, 0) + 4-byte flags, bit 0
// set for a producer connection (docs/dcp/documentation/commands/open-connection.md).
// GET_ALL_VB_SEQNOS (0x48): optional 4-byte state (0 alive, else 1..4); its
// answer is 10 bytes per vbucket, vbucket then high seqno, big-endian, sorted
// by vbucket (docs/dcp/documentation/commands/get_seqno.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncwrite::server::protocol {

enum class ParamType : uint32_t {
  kFlush = 1,
  kReplication = 2,
  kCheckpoint = 3,
  kDcp = 4,
  kVbucket = 5,
  kConfig = 6,
};

// The parameter type for a wire value, or nullopt outside 1..6.
std::optional<ParamType> paramTypeFromWire(uint32_t value) noexcept;

enum class VbucketState : uint8_t {
  kActive = 1,
  kReplica = 2,
  kPending = 3,
  kDead = 4,
};

// The state for a wire value, or nullopt outside 1..4.
std::optional<VbucketState> vbucketStateFromWire(uint32_t value) noexcept;

// The state for its name: "active", "replica", "pending", "dead"; nullopt otherwise.
std::optional<VbucketState> vbucketStateFromString(std::string_view name) noexcept;

// "active", "replica", "pending", "dead"; "invalid" otherwise.
std::string_view toString(VbucketState state) noexcept;

// DCP_OPEN flags (bit 0).
inline constexpr uint32_t kDcpOpenProducer = 0x1;

// One vbucket's entry in GET_ALL_VB_SEQNOS's answer.
struct VbSeqno {
  uint16_t vbucket = 0;
  uint64_t seqno = 0;
  bool operator==(const VbSeqno&) const = default;
};
inline constexpr size_t kVbSeqnoSize = 10;

void appendVbSeqno(std::string& out, VbSeqno entry);
// The entries of an answer's value, or nullopt when its length is not a
// multiple of kVbSeqnoSize.
std::optional<std::vector<VbSeqno>> parseVbSeqnos(std::string_view value);

// The longest key the server accepts (kv_engine's limit). Longer keys: Einval.
inline constexpr size_t kMaxKeyLength = 250;

}  // namespace syncwrite::server::protocol
