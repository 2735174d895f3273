// Server-side response encoding: appends responses (magic 0x81) to an output
// buffer the connection then writes.
//
// Every function appends exactly one complete packet to `out` and never
// clears it, so a connection can batch responses of pipelined requests
// in request order. Cost: one append per section; `out` grows as std::string
// does.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "server/protocol/feature.h"
#include "server/protocol/opcode.h"
#include "server/protocol/request.h"
#include "server/protocol/status.h"

namespace syncwrite::server::protocol {

struct ResponseFields {
  Opcode opcode = Opcode::kNoop;
  Status status = Status::kSuccess;
  uint32_t opaque = 0;
  uint64_t cas = 0;
  uint8_t datatype = 0;
  std::string_view extras{};
  std::string_view key{};
  std::string_view value{};
};

// Any response.
void appendResponse(std::string& out, const ResponseFields& response);

// A response with no body: Success of SET/DELETE/NOOP/SELECT_BUCKET..., with
// the item's CAS for mutations.
void appendStatusResponse(std::string& out, Opcode opcode, Status status, uint32_t opaque,
                          uint64_t cas = 0);

// An error with an explanation. The value is kv_engine's error-context JSON,
// {"error":{"context":"<message>"}}, with datatype JSON unless `json_datatype`
// is false (a connection that did not negotiate JSON); with an empty message,
// no body at all.
void appendErrorResponse(std::string& out, Opcode opcode, Status status, uint32_t opaque,
                         std::string_view message, bool json_datatype = true);

// kv_engine's error-context JSON for `message`, {"error":{"context":"<message>"}}
// (invalid UTF-8 replaced): the body appendErrorResponse() sends.
std::string errorContext(std::string_view message);

// As appendErrorResponse(), with a body errorContext() already built: for an
// answer sent many times over (a SyncWrite's ambiguous answer), built once.
// One reservation of `out`; no other allocation.
void appendErrorContextResponse(std::string& out, Opcode opcode, Status status, uint32_t opaque,
                                std::string_view context_json, bool json_datatype);

// The answer to a request parseRequest refused: its opcode, opaque, status and
// message (marked JSON only when `json_datatype`). UnknownCommand is answered
// with no body, as kv_engine does: some clients read the body of an answer to
// a bootstrap request as its payload whatever the status.
void appendParseError(std::string& out, const ParseResult& refused, bool json_datatype = true);

// GET hit: 4-byte flags extras, the value, the item's CAS.
void appendGetResponse(std::string& out, uint32_t opaque, uint64_t cas, uint32_t flags,
                       std::string_view value);

// One stat of a STAT answer: key = the stat's name, value = its text.
void appendStatResponse(std::string& out, uint32_t opaque, std::string_view key,
                        std::string_view value);

// The terminator of a STAT answer: Success with no key and no value. A STAT
// answer is zero or more appendStatResponse() then exactly one appendStatEnd().
// (An error, e.g. NoBucket or an unknown group, is a single error response
// instead, with no terminator.)
void appendStatEnd(std::string& out, uint32_t opaque);

// HELLO answer: Success with the agreed features (see negotiateFeatures()).
void appendHelloResponse(std::string& out, uint32_t opaque, std::span<const Feature> agreed);

// VERSION answer: Success with the version text as value.
void appendVersionResponse(std::string& out, uint32_t opaque, std::string_view version);

}  // namespace syncwrite::server::protocol
