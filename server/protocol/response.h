// Response: an owned copy of one response packet, as the client reads it.
#pragma once

#include <cstdint>
#include <string>

#include "server/protocol/opcode.h"
#include "server/protocol/packet.h"
#include "server/protocol/status.h"

namespace syncwrite::server::protocol {

struct Response {
  Opcode opcode = Opcode::kNoop;
  Status status = Status::kSuccess;
  uint32_t opaque = 0;
  uint64_t cas = 0;
  uint8_t datatype = 0;
  std::string extras;
  std::string key;
  std::string value;

  bool ok() const noexcept { return status == Status::kSuccess; }

  // The server's explanation of an error: the "context" of kv_engine's
  // {"error":{"context":...}} JSON value, the raw value when it is not that
  // JSON, "" when there is none.
  std::string errorContext() const;

  // Copies a packet framed by PacketReader(kResponses).
  static Response fromPacket(const Packet& packet);
};

}  // namespace syncwrite::server::protocol
