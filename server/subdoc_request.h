// The specs of a validated SUBDOC_* request (protocol::parseRequest has
// checked its extras), decoded into the subdoc library's vocabulary.
//
// Wire layouts (kv_engine docs/SubDocument.md, "Multi-Path"):
//   single path     the request's own opcode, path flags from the extras,
//                   path = value[0, path length), spec value = the rest
//   MULTI_LOOKUP    repeated: opcode u8, path flags u8, path length u16, path
//   MULTI_MUTATION  repeated: opcode u8, path flags u8, path length u16,
//                   value length u32, path, value
// Lengths are big-endian. Decoding checks only the framing (every length
// inside the body, at least one spec, at most subdoc::kMaxSpecs + 1 so that
// the library's own count check answers SubdocInvalidCombo); the library's
// validateLookup/validateMutation judge opcodes, flags, paths and values.
//
// Cost: one pass over the body; the specs copy their paths and values.
#pragma once

#include <string>
#include <vector>

#include "server/protocol/request.h"
#include "subdoc/spec.h"

namespace syncwrite::server {

struct DecodedLookup {
  std::vector<subdoc::LookupSpec> specs;
  std::string error;  // non-empty: the body is malformed (answer Einval with it)
};

struct DecodedMutation {
  std::vector<subdoc::MutationSpec> specs;
  std::string error;
};

// Requires: request.opcode is a single-path lookup or SUBDOC_MULTI_LOOKUP.
DecodedLookup decodeLookupSpecs(const protocol::Request& request);
// Requires: request.opcode is a single-path mutation or SUBDOC_MULTI_MUTATION.
DecodedMutation decodeMutationSpecs(const protocol::Request& request);

}  // namespace syncwrite::server
