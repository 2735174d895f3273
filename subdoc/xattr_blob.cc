#include "subdoc/xattr_blob.h"

#include <cstring>
#include <unordered_set>

#include "subdoc/json_value.h"
#include "subdoc/spec.h"

namespace syncwrite::subdoc {
namespace {

uint32_t readBigEndian32(std::string_view bytes, std::size_t offset) {
  uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    value = (value << 8) | static_cast<unsigned char>(bytes[offset + i]);
  }
  return value;
}

void appendBigEndian32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// Width of the UTF-8 sequence at text[pos], or 0 if it is not well-formed.
std::size_t utf8Width(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  std::size_t width = 0;
  if (lead < 0x80) {
    return 1;
  }
  if ((lead & 0xe0) == 0xc0) {
    width = 2;
  } else if ((lead & 0xf0) == 0xe0) {
    width = 3;
  } else if ((lead & 0xf8) == 0xf0) {
    width = 4;
  } else {
    return 0;
  }
  if (pos + width > text.size()) {
    return 0;
  }
  for (std::size_t i = 1; i < width; ++i) {
    if ((static_cast<unsigned char>(text[pos + i]) & 0xc0) != 0x80) {
      return 0;
    }
  }
  return width;
}

bool isPunctOrControl(unsigned char c) {
  return c < 0x20 || c == 0x7f || (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) ||
         (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
}

}  // namespace

bool isValidXattrKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxXattrKeyLength) {
    return false;
  }
  const auto first = static_cast<unsigned char>(key.front());
  if (isPunctOrControl(first) && first != '_' && first != '$') {
    return false;
  }
  if ((first == '_' || first == '$') && key.size() == 1) {
    return false;
  }
  for (std::size_t pos = 0; pos < key.size();) {
    const char c = key[pos];
    if (c == '\0' || c == '.' || c == '[') {
      return false;
    }
    const auto width = utf8Width(key, pos);
    if (width == 0) {
      return false;
    }
    pos += width;
  }
  return true;
}

bool decodeXattrs(std::string_view section, Xattrs& out) {
  out.clear();
  if (section.size() < 4 || readBigEndian32(section, 0) != section.size() - 4) {
    return false;
  }
  std::unordered_set<std::string_view> seen;
  std::size_t systemBytes = 4;
  std::size_t offset = 4;
  while (offset < section.size()) {
    if (section.size() - offset < 4) {
      return false;
    }
    const std::size_t pairLength = readBigEndian32(section, offset);
    offset += 4;
    if (pairLength > section.size() - offset) {
      return false;
    }
    const std::string_view pair = section.substr(offset, pairLength);
    offset += pairLength;
    const auto keyEnd = pair.find('\0');
    if (keyEnd == std::string_view::npos || pair.empty() || pair.back() != '\0') {
      return false;
    }
    const std::string_view key = pair.substr(0, keyEnd);
    const std::string_view value = pair.substr(keyEnd + 1, pair.size() - keyEnd - 2);
    if (value.find('\0') != std::string_view::npos || !isValidXattrKey(key) ||
        !seen.insert(key).second) {
      return false;
    }
    Json parsed;
    if (parseJson(value, parsed) != ParseResult::kOk) {
      return false;
    }
    if (isSystemXattr(key)) {
      systemBytes += 4 + pair.size();
    }
    out.push_back({std::string(key), std::string(value)});
  }
  return systemBytes <= kMaxSystemXattrBytes;
}

std::string encodeXattrs(const Xattrs& xattrs) {
  if (xattrs.empty()) {
    return {};
  }
  std::size_t total = 0;
  for (const auto& xattr : xattrs) {
    total += 4 + xattr.key.size() + 1 + xattr.value.size() + 1;
  }
  std::string out;
  out.reserve(4 + total);
  appendBigEndian32(out, static_cast<uint32_t>(total));
  for (const auto& xattr : xattrs) {
    appendBigEndian32(out, static_cast<uint32_t>(xattr.key.size() + xattr.value.size() + 2));
    out.append(xattr.key).push_back('\0');
    out.append(xattr.value).push_back('\0');
  }
  return out;
}

bool splitValue(std::string_view value, uint8_t datatype, SplitValue& out) {
  if ((datatype & datatype::kXattr) == 0) {
    out = {{}, value};
    return true;
  }
  if (value.size() < 4) {
    return false;
  }
  const std::size_t length = readBigEndian32(value, 0);
  if (length > value.size() - 4) {
    return false;
  }
  out = {value.substr(0, 4 + length), value.substr(4 + length)};
  return true;
}

bool stripXattrs(std::string_view value, uint8_t datatype, std::string_view& body,
                 uint8_t& bodyDatatype) {
  SplitValue split;
  if (!splitValue(value, datatype, split)) {
    return false;
  }
  body = split.body;
  bodyDatatype = static_cast<uint8_t>(datatype & ~datatype::kXattr);
  return true;
}

Xattrs systemXattrsOf(const Xattrs& xattrs) {
  Xattrs system;
  for (const auto& xattr : xattrs) {
    if (isSystemXattr(xattr.key)) {
      system.push_back(xattr);
    }
  }
  return system;
}

}  // namespace syncwrite::subdoc
