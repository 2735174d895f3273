// Client-side request encoding: appends requests to a buffer the client then
// sends. Used by the blocking Client, the CLI, and tests (which also build
// malformed requests on purpose: nothing here validates what it is asked to
// encode beyond what the wire layout needs).
//
// Requests without framing extras use magic 0x80; with framing extras (a
// durability frame or raw framing bytes), magic 0x08, whose key length is one
// byte, so keys over 255 bytes can only be sent with magic 0x80 (appendRequest
// requires it and asserts in debug builds).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "durability/level.h"
#include "server/protocol/command_values.h"
#include "server/protocol/feature.h"
#include "server/protocol/opcode.h"

namespace syncwrite::server::protocol {

// A durability requirement as the client sends it: any level byte (invalid
// ones included) and an optional timeout in ms (0 and 0xffff included).
struct DurabilitySpec {
  durability::Level level = durability::Level::kMajority;
  std::optional<uint16_t> timeout_ms{};
};

struct RequestFields {
  Opcode opcode = Opcode::kNoop;
  uint32_t opaque = 0;
  uint16_t vbucket = 0;
  uint64_t cas = 0;
  uint8_t datatype = 0;
  std::optional<DurabilitySpec> durability{};  // encoded first in the framing extras
  std::string_view framing_extras{};           // raw frames appended after it
  std::string_view extras{};
  std::string_view key{};
  std::string_view value{};
};

// Any request. Magic 0x08 when `durability` or `framing_extras` is set, else
// 0x80. Requires: with magic 0x08, key.size() <= 255 and the framing extras
// <= 255 bytes; with 0x80, key.size() <= 65535.
void appendRequest(std::string& out, const RequestFields& request);

// Options of SET/ADD/REPLACE/DELETE.
struct MutationOptions {
  std::optional<DurabilitySpec> durability{};
  uint64_t cas = 0;
  uint32_t flags = 0;   // SET/ADD/REPLACE only
  uint32_t expiry = 0;  // SET/ADD/REPLACE only
};

// GET key.
void appendGet(std::string& out, uint32_t opaque, uint16_t vbucket, std::string_view key);

// SET/ADD/REPLACE (or their quiet forms): 8-byte extras (flags, expiry),
// key, value. Requires: opcode is kSet, kAdd, kReplace, kSetQ, kAddQ or
// kReplaceQ.
void appendStore(std::string& out, Opcode opcode, uint32_t opaque, uint16_t vbucket,
                 std::string_view key, std::string_view value, const MutationOptions& options = {});

// DELETE key (flags/expiry of `options` unused).
void appendDelete(std::string& out, uint32_t opaque, uint16_t vbucket, std::string_view key,
                  const MutationOptions& options = {});

// A request with no body: NOOP, VERSION, QUIT.
void appendSimple(std::string& out, Opcode opcode, uint32_t opaque);

// STAT with `group` as key ("" for the general group).
void appendStat(std::string& out, uint32_t opaque, std::string_view group);

// HELLO: key = agent name, value = the 2-byte feature codes.
void appendHello(std::string& out, uint32_t opaque, std::string_view agent,
                 std::span<const Feature> features);

// SELECT_BUCKET: key = bucket name.
void appendSelectBucket(std::string& out, uint32_t opaque, std::string_view bucket);

// SET_PARAM: 4-byte extras = type, key = config key, value = new value text.
void appendSetParam(std::string& out, uint32_t opaque, ParamType type, std::string_view key,
                    std::string_view value);

// SET_VBUCKET: vbucket in the header, 1-byte extras = state, and `value`
// (kv_engine's {"topology": ...}) when not empty.
void appendSetVbucket(std::string& out, uint32_t opaque, uint16_t vbucket, VbucketState state,
                      std::string_view value = {});

// DCP_OPEN: 8-byte extras (seqno 0, flags), key = connection name.
// `value`: optional, e.g. {"consumer_name": "<node>"}.
void appendDcpOpen(std::string& out, uint32_t opaque, std::string_view name,
                   uint32_t flags = kDcpOpenProducer, std::string_view value = {});

// SASL_AUTH PLAIN: key = "PLAIN", value = "\0user\0password" (RFC 4616).
void appendSaslPlain(std::string& out, uint32_t opaque, std::string_view user,
                     std::string_view password);

// DCP_SEQNO_ACKNOWLEDGED: vbucket in the header, 8-byte extras = prepared seqno.
void appendSeqnoAcknowledged(std::string& out, uint32_t opaque, uint16_t vbucket,
                             uint64_t prepared_seqno);

// GET_ALL_VB_SEQNOS: no extras (every vbucket not dead), or 4-byte extras =
// `state` (0 alive, 1..4 one VbucketState).
void appendGetAllVbSeqnos(std::string& out, uint32_t opaque, std::optional<uint32_t> state);

}  // namespace syncwrite::server::protocol
