#include "subdoc/path.h"

#include <limits>

#include "subdoc/spec.h"

namespace syncwrite::subdoc {
namespace {

bool isJsonEscape(char c) {
  switch (c) {
    case '"':
    case '/':
    case '\\':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      return true;
    default:
      return false;
  }
}

char unescapeJson(char c) {
  switch (c) {
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return c;  // '"', '/', '\\'
  }
}

// Parses the index text between brackets: digits, or exactly "-1".
bool parseIndex(std::string_view text, int64_t& out) {
  if (text == "-1") {
    out = -1;
    return true;
  }
  if (text.empty()) {
    return false;
  }
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10) {
      return false;
    }
    value = value * 10 + digit;
  }
  out = static_cast<int64_t>(value);
  return true;
}

// Reads one member name starting at text[pos]; stops before an unescaped '.'
// or '['. On success, `pos` is at the terminator (or the end).
Status parseName(std::string_view text, std::size_t& pos, std::string& name) {
  bool inBackticks = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '\\') {
      if (pos + 1 >= text.size() || !isJsonEscape(text[pos + 1])) {
        return Status::SubdocPathEinval;
      }
      name.push_back(unescapeJson(text[++pos]));
      continue;
    }
    if (c == '"' || static_cast<unsigned char>(c) < 0x20) {
      return Status::SubdocPathEinval;
    }
    if (c == '`') {
      if (inBackticks && pos + 1 < text.size() && text[pos + 1] == '`') {
        name.push_back('`');  // a doubled backtick inside an escape is literal
        ++pos;
        continue;
      }
      inBackticks = !inBackticks;
      continue;
    }
    if (!inBackticks) {
      if (c == '.' || c == '[') {
        break;
      }
      if (c == ']') {
        return Status::SubdocPathEinval;
      }
    }
    name.push_back(c);
  }
  if (inBackticks) {
    return Status::SubdocPathEinval;
  }
  // An empty component ("a..b", or "``" which names nothing) is a syntax error.
  if (name.empty()) {
    return Status::SubdocPathEinval;
  }
  return Status::Success;
}

}  // namespace

Status parsePath(std::string_view text, Path& out, std::size_t extraComponents) {
  out.clear();
  if (text.size() > kMaxPathLength) {
    return Status::SubdocPathE2big;
  }
  std::size_t pos = 0;
  auto add = [&](PathComponent component) {
    if (out.size() + extraComponents >= kMaxPathComponents) {
      return false;
    }
    out.push_back(std::move(component));
    return true;
  };
  while (pos < text.size()) {
    if (text[pos] == '[') {
      const auto close = text.find(']', pos + 1);
      int64_t index = 0;
      if (close == std::string_view::npos ||
          !parseIndex(text.substr(pos + 1, close - pos - 1), index)) {
        return Status::SubdocPathEinval;
      }
      if (!add(PathComponent::element(index))) {
        return Status::SubdocPathE2big;
      }
      pos = close + 1;
      if (pos < text.size()) {
        if (text[pos] == '.') {
          ++pos;
          if (pos == text.size()) {
            return Status::SubdocPathEinval;
          }
        } else if (text[pos] != '[') {
          return Status::SubdocPathEinval;
        }
      }
      continue;
    }
    std::string name;
    if (const auto status = parseName(text, pos, name); status != Status::Success) {
      return status;
    }
    if (!add(PathComponent::member(std::move(name)))) {
      return Status::SubdocPathE2big;
    }
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (pos == text.size()) {
        return Status::SubdocPathEinval;
      }
    }
  }
  return Status::Success;
}

XattrPathParts splitXattrPath(std::string_view path) {
  const auto end = path.find_first_of(".[");
  if (end == std::string_view::npos) {
    return {path, {}};
  }
  return {path.substr(0, end), path.substr(end)};
}

}  // namespace syncwrite::subdoc
