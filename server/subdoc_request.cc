#include "server/subdoc_request.h"

#include <absl/strings/str_cat.h>

#include "server/protocol/byte_order.h"

namespace syncwrite::server {
namespace {

constexpr size_t kLookupSpecHeader = 4;    // opcode, flags, path length
constexpr size_t kMutationSpecHeader = 8;  // + value length

// Over this many specs, decoding stops: the library answers the count.
constexpr size_t kDecodeLimit = subdoc::kMaxSpecs + 1;

}  // namespace

DecodedLookup decodeLookupSpecs(const protocol::Request& request) {
  DecodedLookup out;
  if (request.opcode != protocol::Opcode::kSubdocMultiLookup) {
    out.specs.push_back({.opcode = static_cast<subdoc::Opcode>(request.opcode),
                         .flags = request.subdoc_path_flags,
                         .path = std::string(request.value.substr(0, request.subdoc_path_length))});
    if (request.value.size() != request.subdoc_path_length) {
      out.error =
          absl::StrCat("a lookup takes a path and no value; got ",
                       request.value.size() - request.subdoc_path_length, " bytes after the path");
    }
    return out;
  }
  const std::string_view body = request.value;
  size_t at = 0;
  while (at < body.size() && out.specs.size() < kDecodeLimit) {
    if (body.size() - at < kLookupSpecHeader) {
      out.error = absl::StrCat("lookup spec ", out.specs.size(), " is cut short at byte ", at);
      return out;
    }
    const size_t path_length = protocol::wire::load16(body, at + 2);
    if (body.size() - at - kLookupSpecHeader < path_length) {
      out.error = absl::StrCat("lookup spec ", out.specs.size(), "'s path of ", path_length,
                               " bytes runs past the body");
      return out;
    }
    out.specs.push_back({.opcode = static_cast<subdoc::Opcode>(body[at]),
                         .flags = static_cast<uint8_t>(body[at + 1]),
                         .path = std::string(body.substr(at + kLookupSpecHeader, path_length))});
    at += kLookupSpecHeader + path_length;
  }
  if (out.specs.empty()) out.error = "SUBDOC_MULTI_LOOKUP carries no spec";
  return out;
}

DecodedMutation decodeMutationSpecs(const protocol::Request& request) {
  DecodedMutation out;
  if (request.opcode != protocol::Opcode::kSubdocMultiMutation) {
    out.specs.push_back({.opcode = static_cast<subdoc::Opcode>(request.opcode),
                         .flags = request.subdoc_path_flags,
                         .path = std::string(request.value.substr(0, request.subdoc_path_length)),
                         .value = std::string(request.value.substr(request.subdoc_path_length))});
    return out;
  }
  const std::string_view body = request.value;
  size_t at = 0;
  while (at < body.size() && out.specs.size() < kDecodeLimit) {
    if (body.size() - at < kMutationSpecHeader) {
      out.error = absl::StrCat("mutation spec ", out.specs.size(), " is cut short at byte ", at);
      return out;
    }
    const size_t path_length = protocol::wire::load16(body, at + 2);
    const size_t value_length = protocol::wire::load32(body, at + 4);
    if (body.size() - at - kMutationSpecHeader < path_length + value_length) {
      out.error = absl::StrCat("mutation spec ", out.specs.size(), "'s path (", path_length,
                               " bytes) and value (", value_length, " bytes) run past the body");
      return out;
    }
    const size_t path_at = at + kMutationSpecHeader;
    out.specs.push_back({.opcode = static_cast<subdoc::Opcode>(body[at]),
                         .flags = static_cast<uint8_t>(body[at + 1]),
                         .path = std::string(body.substr(path_at, path_length)),
                         .value = std::string(body.substr(path_at + path_length, value_length))});
    at = path_at + path_length + value_length;
  }
  if (out.specs.empty()) out.error = "SUBDOC_MULTI_MUTATION carries no spec";
  return out;
}

}  // namespace syncwrite::server
