#include "server/protocol/response.h"

#include <nlohmann/json.hpp>

namespace syncwrite::server::protocol {

std::string Response::errorContext() const {
  if (value.empty()) return "";
  const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    const auto error = parsed.find("error");
    if (error != parsed.end() && error->is_object()) {
      const auto context = error->find("context");
      if (context != error->end() && context->is_string()) return context->get<std::string>();
    }
  }
  return value;
}

Response Response::fromPacket(const Packet& packet) {
  Response r;
  r.opcode = packet.header.opcode;
  r.status = packet.header.status();
  r.opaque = packet.header.opaque;
  r.cas = packet.header.cas;
  r.datatype = packet.header.datatype;
  r.extras = std::string(packet.extras);
  r.key = std::string(packet.key);
  r.value = std::string(packet.value);
  return r;
}

}  // namespace syncwrite::server::protocol
