#include "subdoc/vattr.h"

#include <cstdio>

#include "subdoc/crc32c.h"
#include "subdoc/spec.h"

namespace syncwrite::subdoc {
namespace {

Json datatypeNames(uint8_t value) {
  Json names = Json::array();
  if (value == 0) {
    names.push_back("raw");
    return names;
  }
  if ((value & datatype::kSnappy) != 0) {
    names.push_back("snappy");
  }
  if ((value & datatype::kJson) != 0) {
    names.push_back("json");
  }
  if ((value & datatype::kXattr) != 0) {
    names.push_back("xattr");
  }
  return names;
}

}  // namespace

std::string toHex64(uint64_t value) {
  char buffer[19];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string toHex32(uint32_t value) {
  char buffer[11];
  std::snprintf(buffer, sizeof buffer, "0x%08x", static_cast<unsigned>(value));
  return buffer;
}

Json documentVattr(const DocumentMeta& meta, std::string_view body) {
  Json doc = Json::object();
  doc["CAS"] = toHex64(meta.cas);
  doc["datatype"] = datatypeNames(meta.datatype);
  doc["deleted"] = meta.deleted;
  doc["exptime"] = meta.exptime;
  doc["flags"] = meta.flags;
  if (meta.casIsHlc) {
    doc["last_modified"] = std::to_string(meta.cas / 1'000'000'000);
  }
  doc["revid"] = std::to_string(meta.revid);
  doc["seqno"] = toHex64(meta.seqno);
  doc["value_bytes"] = body.size();
  doc["value_crc32c"] = toHex32(crc32c(body));
  doc["vbucket_uuid"] = toHex64(meta.vbucketUuid);
  return doc;
}

Json vbucketVattr(const VbucketMeta& meta) {
  Json hlc = Json::object();
  hlc["mode"] = meta.hlcReal ? "real" : "logical";
  hlc["now"] = std::to_string(meta.hlcNowSeconds);
  Json root = Json::object();
  root["HLC"] = std::move(hlc);
  return root;
}

Json xtocVattr(const Xattrs& xattrs, bool includeSystem) {
  Json keys = Json::array();
  for (const auto& xattr : xattrs) {
    if (includeSystem || !isSystemXattr(xattr.key)) {
      keys.push_back(xattr.key);
    }
  }
  return keys;
}

}  // namespace syncwrite::subdoc
