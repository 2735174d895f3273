#include "server/protocol/request_encoder.h"

#include <cassert>

#include "server/protocol/byte_order.h"
#include "server/protocol/frame_info.h"
#include "server/protocol/packet.h"

namespace syncwrite::server::protocol {

void appendRequest(std::string& out, const RequestFields& r) {
  std::string frames;
  if (r.durability) appendDurabilityFrame(frames, r.durability->level, r.durability->timeout_ms);
  frames.append(r.framing_extras);
  const bool alt = !frames.empty();
  assert(!alt || (r.key.size() <= 0xff && frames.size() <= 0xff));

  Header h;
  h.magic = static_cast<uint8_t>(alt ? Magic::kAltClientRequest : Magic::kClientRequest);
  h.opcode = r.opcode;
  h.framing_extras_length = static_cast<uint8_t>(frames.size());
  h.key_length = static_cast<uint16_t>(r.key.size());
  h.extras_length = static_cast<uint8_t>(r.extras.size());
  h.datatype = r.datatype;
  h.vbucket_or_status = r.vbucket;
  h.body_length =
      static_cast<uint32_t>(frames.size() + r.extras.size() + r.key.size() + r.value.size());
  h.opaque = r.opaque;
  h.cas = r.cas;
  out.reserve(out.size() + kHeaderSize + h.body_length);
  appendHeader(out, h);
  out.append(frames);
  out.append(r.extras);
  out.append(r.key);
  out.append(r.value);
}

void appendGet(std::string& out, uint32_t opaque, uint16_t vbucket, std::string_view key) {
  appendRequest(out, {.opcode = Opcode::kGet, .opaque = opaque, .vbucket = vbucket, .key = key});
}

void appendStore(std::string& out, Opcode opcode, uint32_t opaque, uint16_t vbucket,
                 std::string_view key, std::string_view value, const MutationOptions& options) {
  const Opcode loud = unquiet(opcode);
  assert(loud == Opcode::kSet || loud == Opcode::kAdd || loud == Opcode::kReplace);
  (void)loud;
  std::string extras;
  wire::append32(extras, options.flags);
  wire::append32(extras, options.expiry);
  appendRequest(out, {.opcode = opcode,
                      .opaque = opaque,
                      .vbucket = vbucket,
                      .cas = options.cas,
                      .durability = options.durability,
                      .extras = extras,
                      .key = key,
                      .value = value});
}

void appendDelete(std::string& out, uint32_t opaque, uint16_t vbucket, std::string_view key,
                  const MutationOptions& options) {
  appendRequest(out, {.opcode = Opcode::kDelete,
                      .opaque = opaque,
                      .vbucket = vbucket,
                      .cas = options.cas,
                      .durability = options.durability,
                      .key = key});
}

void appendSimple(std::string& out, Opcode opcode, uint32_t opaque) {
  appendRequest(out, {.opcode = opcode, .opaque = opaque});
}

void appendStat(std::string& out, uint32_t opaque, std::string_view group) {
  appendRequest(out, {.opcode = Opcode::kStat, .opaque = opaque, .key = group});
}

void appendHello(std::string& out, uint32_t opaque, std::string_view agent,
                 std::span<const Feature> features) {
  std::string value;
  appendFeatures(value, features);
  appendRequest(out, {.opcode = Opcode::kHello, .opaque = opaque, .key = agent, .value = value});
}

void appendSelectBucket(std::string& out, uint32_t opaque, std::string_view bucket) {
  appendRequest(out, {.opcode = Opcode::kSelectBucket, .opaque = opaque, .key = bucket});
}

void appendSetParam(std::string& out, uint32_t opaque, ParamType type, std::string_view key,
                    std::string_view value) {
  std::string extras;
  wire::append32(extras, static_cast<uint32_t>(type));
  appendRequest(out, {.opcode = Opcode::kSetParam,
                      .opaque = opaque,
                      .extras = extras,
                      .key = key,
                      .value = value});
}

void appendSetVbucket(std::string& out, uint32_t opaque, uint16_t vbucket, VbucketState state,
                      std::string_view value) {
  const char extras[1] = {static_cast<char>(state)};
  appendRequest(out, {.opcode = Opcode::kSetVbucket,
                      .opaque = opaque,
                      .vbucket = vbucket,
                      .extras = std::string_view(extras, 1),
                      .value = value});
}

void appendDcpOpen(std::string& out, uint32_t opaque, std::string_view name, uint32_t flags,
                   std::string_view value) {
  std::string extras;
  wire::append32(extras, 0);  // seqno: reserved
  wire::append32(extras, flags);
  appendRequest(out, {.opcode = Opcode::kDcpOpen,
                      .opaque = opaque,
                      .extras = extras,
                      .key = name,
                      .value = value});
}

void appendSaslPlain(std::string& out, uint32_t opaque, std::string_view user,
                     std::string_view password) {
  std::string message;
  message.push_back('\0');
  message.append(user);
  message.push_back('\0');
  message.append(password);
  appendRequest(out,
                {.opcode = Opcode::kSaslAuth, .opaque = opaque, .key = "PLAIN", .value = message});
}

void appendSeqnoAcknowledged(std::string& out, uint32_t opaque, uint16_t vbucket,
                             uint64_t prepared_seqno) {
  std::string extras;
  wire::append64(extras, prepared_seqno);
  appendRequest(out, {.opcode = Opcode::kDcpSeqnoAcknowledged,
                      .opaque = opaque,
                      .vbucket = vbucket,
                      .extras = extras});
}

void appendGetAllVbSeqnos(std::string& out, uint32_t opaque, std::optional<uint32_t> state) {
  std::string extras;
  if (state) wire::append32(extras, *state);
  appendRequest(out, {.opcode = Opcode::kGetAllVbSeqnos, .opaque = opaque, .extras = extras});
}

}  // namespace syncwrite::server::protocol
