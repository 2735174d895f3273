// DocumentRecord: one document version as a KVStore keeps it, and its
// encoding in a RocksDB value.
//
// A record is what a vbucket's log holds for a key at one seqno: a committed
// value or a deletion, or a prepare with its durability level. The encoding
// is a fixed header followed by the value's bytes:
//   byte 0       format version (kFormatVersion)
//   bytes 1-8    seqno, big-endian
//   bytes 9-16   CAS, big-endian
//   bytes 17-20  flags, big-endian
//   bytes 21-24  expiry (seconds since the Unix epoch; 0 = never), big-endian
//   byte 25      datatype
//   byte 26      bit 0: deleted
//   byte 27      durability level (0 for a committed record)
//   bytes 28-    the value
// decode() refuses anything else with DataLoss, naming what is wrong, so a
// damaged file is reported and never loaded as a document.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <absl/status/statusor.h>

namespace syncwrite::kvstore {

struct DocumentRecord {
  std::string key;
  std::string value;
  uint64_t seqno = 0;
  uint64_t cas = 0;
  uint32_t flags = 0;
  uint32_t expiry = 0;
  uint8_t datatype = 0;
  bool deleted = false;
  uint8_t level = 0;  // a prepare's durability level (durability::Level's value); 0 otherwise

  bool operator==(const DocumentRecord&) const = default;
};

inline constexpr uint8_t kFormatVersion = 1;
inline constexpr size_t kRecordHeaderSize = 28;

// The RocksDB value of `record` (its key is stored in the RocksDB key).
std::string encodeRecord(const DocumentRecord& record);
// The record stored under `key` as `bytes`. DataLoss, naming the key, for a
// value shorter than the header or of another format version.
absl::StatusOr<DocumentRecord> decodeRecord(std::string_view key, std::string_view bytes);

}  // namespace syncwrite::kvstore
