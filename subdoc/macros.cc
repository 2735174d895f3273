#include "subdoc/macros.h"

#include <algorithm>

#include "subdoc/spec.h"
#include "subdoc/vattr.h"
#include "subdoc/xattr_blob.h"

namespace syncwrite::subdoc {
namespace {

uint64_t byteSwap64(uint64_t value) {
  uint64_t swapped = 0;
  for (int i = 0; i < 8; ++i) {
    swapped = (swapped << 8) | (value & 0xff);
    value >>= 8;
  }
  return swapped;
}

// splitmix64: a cheap, well-mixed sequence of candidates.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Status validateMacro(std::string_view value) {
  if (value == macro::kCas || value == macro::kSeqno || value == macro::kValueCrc32c) {
    return Status::Success;
  }
  if (value.starts_with(R"("${$document)") && value.ends_with(R"(}")")) {
    return Status::Success;
  }
  return Status::SubdocXattrUnknownMacro;
}

std::string expandMacro(MacroKind kind, uint64_t value) {
  switch (kind) {
    case MacroKind::kCas:
      return "\"" + toHex64(byteSwap64(value)) + "\"";
    case MacroKind::kSeqno:
      return "\"" + toHex64(value) + "\"";
    case MacroKind::kValueCrc32c:
      return "\"" + toHex32(static_cast<uint32_t>(value)) + "\"";
  }
  return {};
}

std::size_t overwriteAll(std::string& section, std::string_view placeholder,
                         std::string_view text) {
  std::size_t count = 0;
  if (placeholder.empty() || placeholder.size() != text.size()) {
    return 0;
  }
  for (auto at = section.find(placeholder); at != std::string::npos;
       at = section.find(placeholder, at + text.size())) {
    std::copy(text.begin(), text.end(), section.begin() + static_cast<std::ptrdiff_t>(at));
    ++count;
  }
  return count;
}

std::size_t fillMutationMacros(std::string& value, uint8_t datatype,
                               const std::vector<PendingMacro>& pending, uint64_t cas,
                               uint64_t seqno) {
  SplitValue split;
  if (pending.empty() || !splitValue(value, datatype, split) || split.xattrs.empty()) {
    return 0;
  }
  std::string section(split.xattrs);
  std::size_t count = 0;
  for (const auto& macro : pending) {
    const uint64_t number = macro.kind == MacroKind::kCas ? cas : seqno;
    if (macro.kind != MacroKind::kValueCrc32c) {
      count += overwriteAll(section, macro.placeholder, expandMacro(macro.kind, number));
    }
  }
  std::copy(section.begin(), section.end(), value.begin());
  return count;
}

std::string makePlaceholder(MacroKind kind, const std::vector<std::string_view>& haystacks,
                            uint64_t salt) {
  for (uint64_t i = 0;; ++i) {
    const uint64_t candidate = mix(salt * 0x100000001b3ULL + i);
    std::string text = expandMacro(kind, candidate);
    const bool unique = std::none_of(haystacks.begin(), haystacks.end(), [&](std::string_view h) {
      return h.find(text) != std::string_view::npos;
    });
    if (unique) {
      return text;
    }
  }
}

}  // namespace syncwrite::subdoc
