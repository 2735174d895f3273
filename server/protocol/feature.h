// HELLO (0x1f) features and their negotiation.
//
// Feature codes from couchbase/kv_engine docs/BinaryProtocol.md ("0x1f HELO"):
// the request's value is a list of 2-byte big-endian codes; the server answers
// the subset it agrees to, in the same encoding. TcpNodelay, SELECT_BUCKET,
// AltRequestSupport and SyncReplication are informational for syncwrite (the
// server behaves the same whether or not they were negotiated); JSON, XERROR,
// XATTR (sub-document xattr paths), UnorderedExecution and MutationSeqno change how answers are
// shaped or sent (server/command.h, Session).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace syncwrite::server::protocol {

enum class Feature : uint16_t {
  kDatatype = 0x01,
  kTls = 0x02,
  kTcpNodelay = 0x03,
  kMutationSeqno = 0x04,
  kTcpDelay = 0x05,
  kXattr = 0x06,
  kXerror = 0x07,
  kSelectBucket = 0x08,
  kSnappy = 0x0a,
  kJson = 0x0b,
  kDuplex = 0x0c,
  kClustermapChangeNotification = 0x0d,
  kUnorderedExecution = 0x0e,
  kTracing = 0x0f,
  kAltRequestSupport = 0x10,
  kSyncReplication = 0x11,
  kCollections = 0x12,
  kOpenTracing = 0x13,
};

// What syncwrite-server agrees to: TcpNodelay, MutationSeqno, XATTR, XERROR,
// SELECT_BUCKET, JSON, UnorderedExecution, AltRequestSupport, SyncReplication.
// Never Snappy, Collections, Duplex or cluster-map notifications.
std::span<const Feature> serverFeatures() noexcept;

// The features of a HELLO request's value that appear in `supported`, in the
// order asked, each once. An odd trailing byte is ignored (parseRequest
// already refuses an odd-length HELLO value). Cost: O(asked * supported).
std::vector<Feature> negotiateFeatures(std::string_view hello_value,
                                       std::span<const Feature> supported = serverFeatures());

// Decodes a HELLO value (request or response) into features, ignoring an odd
// trailing byte.
std::vector<Feature> decodeFeatures(std::string_view hello_value);

// Appends the 2-byte big-endian code of each feature to `out`.
void appendFeatures(std::string& out, std::span<const Feature> features);

// "XERROR", "SyncReplication", ...; "Unknown" otherwise.
std::string_view toString(Feature feature) noexcept;

}  // namespace syncwrite::server::protocol
