#include "kvstore/document_record.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::kvstore {
namespace {

// The key as C escapes (a key may hold any bytes).
std::string escaped(std::string_view key) {
  return absl::CHexEscape(absl::string_view(key.data(), key.size()));
}

template <typename T>
void putBigEndian(std::string& out, T value) {
  for (int shift = (sizeof(T) - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

template <typename T>
T getBigEndian(std::string_view bytes, size_t at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value = static_cast<T>((value << 8) | static_cast<uint8_t>(bytes[at + i]));
  }
  return value;
}

}  // namespace

std::string encodeRecord(const DocumentRecord& record) {
  std::string out;
  out.reserve(kRecordHeaderSize + record.value.size());
  out.push_back(static_cast<char>(kFormatVersion));
  putBigEndian(out, record.seqno);
  putBigEndian(out, record.cas);
  putBigEndian(out, record.flags);
  putBigEndian(out, record.expiry);
  out.push_back(static_cast<char>(record.datatype));
  out.push_back(static_cast<char>(record.deleted ? 1 : 0));
  out.push_back(static_cast<char>(record.level));
  out.append(record.value);
  return out;
}

absl::StatusOr<DocumentRecord> decodeRecord(std::string_view key, std::string_view bytes) {
  if (bytes.size() < kRecordHeaderSize) {
    return absl::DataLossError(absl::StrCat("the record of key \"", escaped(key), "\" is ",
                                            bytes.size(), " bytes, shorter than its header (",
                                            kRecordHeaderSize, ")"));
  }
  if (static_cast<uint8_t>(bytes[0]) != kFormatVersion) {
    return absl::DataLossError(
        absl::StrCat("the record of key \"", escaped(key), "\" has format version ",
                     static_cast<uint8_t>(bytes[0]), ", not ", kFormatVersion));
  }
  const auto flags_byte = static_cast<uint8_t>(bytes[26]);
  if ((flags_byte & ~uint8_t{1}) != 0) {
    return absl::DataLossError(absl::StrCat("the record of key \"", escaped(key),
                                            "\" has unknown flag bits ", flags_byte));
  }
  DocumentRecord record;
  record.key = std::string(key);
  record.seqno = getBigEndian<uint64_t>(bytes, 1);
  record.cas = getBigEndian<uint64_t>(bytes, 9);
  record.flags = getBigEndian<uint32_t>(bytes, 17);
  record.expiry = getBigEndian<uint32_t>(bytes, 21);
  record.datatype = static_cast<uint8_t>(bytes[25]);
  record.deleted = (flags_byte & 1) != 0;
  record.level = static_cast<uint8_t>(bytes[27]);
  record.value = std::string(bytes.substr(kRecordHeaderSize));
  return record;
}

}  // namespace syncwrite::kvstore
