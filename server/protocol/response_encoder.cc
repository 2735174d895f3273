#include "server/protocol/response_encoder.h"

#include <nlohmann/json.hpp>

#include "server/protocol/byte_order.h"
#include "server/protocol/packet.h"

namespace syncwrite::server::protocol {

void appendResponse(std::string& out, const ResponseFields& r) {
  Header h;
  h.magic = static_cast<uint8_t>(Magic::kClientResponse);
  h.opcode = r.opcode;
  h.key_length = static_cast<uint16_t>(r.key.size());
  h.extras_length = static_cast<uint8_t>(r.extras.size());
  h.datatype = r.datatype;
  h.vbucket_or_status = static_cast<uint16_t>(r.status);
  h.body_length = static_cast<uint32_t>(r.extras.size() + r.key.size() + r.value.size());
  h.opaque = r.opaque;
  h.cas = r.cas;
  out.reserve(out.size() + kHeaderSize + h.body_length);
  appendHeader(out, h);
  out.append(r.extras);
  out.append(r.key);
  out.append(r.value);
}

void appendStatusResponse(std::string& out, Opcode opcode, Status status, uint32_t opaque,
                          uint64_t cas) {
  appendResponse(out, {.opcode = opcode, .status = status, .opaque = opaque, .cas = cas});
}

void appendErrorResponse(std::string& out, Opcode opcode, Status status, uint32_t opaque,
                         std::string_view message, bool json_datatype) {
  if (message.empty()) {
    appendStatusResponse(out, opcode, status, opaque);
    return;
  }
  appendErrorContextResponse(out, opcode, status, opaque, errorContext(message), json_datatype);
}

std::string errorContext(std::string_view message) {
  return nlohmann::json{{"error", {{"context", std::string(message)}}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void appendErrorContextResponse(std::string& out, Opcode opcode, Status status, uint32_t opaque,
                                std::string_view context_json, bool json_datatype) {
  appendResponse(out, {.opcode = opcode,
                       .status = status,
                       .opaque = opaque,
                       .datatype = json_datatype ? kDatatypeJson : uint8_t{0},
                       .value = context_json});
}

void appendParseError(std::string& out, const ParseResult& refused, bool json_datatype) {
  const bool unknown = refused.status == Status::kUnknownCommand;
  appendErrorResponse(out, refused.request.opcode, refused.status, refused.request.opaque,
                      unknown ? std::string_view() : std::string_view(refused.message),
                      json_datatype);
}

void appendGetResponse(std::string& out, uint32_t opaque, uint64_t cas, uint32_t flags,
                       std::string_view value) {
  std::string extras;
  wire::append32(extras, flags);
  appendResponse(out, {.opcode = Opcode::kGet,
                       .status = Status::kSuccess,
                       .opaque = opaque,
                       .cas = cas,
                       .extras = extras,
                       .value = value});
}

void appendStatResponse(std::string& out, uint32_t opaque, std::string_view key,
                        std::string_view value) {
  appendResponse(out, {.opcode = Opcode::kStat,
                       .status = Status::kSuccess,
                       .opaque = opaque,
                       .key = key,
                       .value = value});
}

void appendStatEnd(std::string& out, uint32_t opaque) {
  appendStatusResponse(out, Opcode::kStat, Status::kSuccess, opaque);
}

void appendHelloResponse(std::string& out, uint32_t opaque, std::span<const Feature> agreed) {
  std::string value;
  appendFeatures(value, agreed);
  appendResponse(
      out,
      {.opcode = Opcode::kHello, .status = Status::kSuccess, .opaque = opaque, .value = value});
}

void appendVersionResponse(std::string& out, uint32_t opaque, std::string_view version) {
  appendResponse(
      out,
      {.opcode = Opcode::kVersion, .status = Status::kSuccess, .opaque = opaque, .value = version});
}

}  // namespace syncwrite::server::protocol
