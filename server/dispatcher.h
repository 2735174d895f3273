// Dispatcher: executes one validated request (protocol/request.h) for a
// connection and says how it was answered.
//
// Most commands answer at once: the response bytes are appended to `out`.
// A durable mutation the durability layer accepted (WriteStatus::kPending)
// answers later, when it resolves: the dispatcher takes a LateReply from
// `defer` and hands it to the SyncWrite's completion, which encodes the
// response (Success with the CAS on commit; SyncWriteAmbiguous 0xa3 with the
// reason otherwise) and passes it to the LateReply from whatever thread
// resolved it. DCP_SEQNO_ACKNOWLEDGED answers nothing on success (as
// kv_engine's producer does; docs/dcp/documentation/commands/
// seqno-acknowledged.md), only its errors.
//
// Statuses (docs/protocol.md lists them all): data commands before
// SELECT_BUCKET 0x08; a vbucket that does not exist or is not active 0x07;
// durability: kInvalidLevel 0xa0, kDurabilityImpossible 0xa1,
// kSyncWriteInProgress 0xa2; ADD of a present key 0x02; REPLACE/DELETE/GET
// of an absent key 0x01; a refused SET_PARAM 0x04 with the config layer's
// message; a request CAS (compare-and-swap) 0x83, not supported.
//
// CAS: the server chooses each write's CAS: nanoseconds of the real-time
// clock, or the previous CAS + 1 when the clock has not moved past it, so
// CAS values are unique and increasing within the process (a hybrid clock
// like kv_engine's, without the vbucket part).
//
// Thread-safety: execute() is called on a connection's strand; the
// dispatcher itself holds no per-connection state (that is the Session) and
// may serve every connection at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "server/protocol/request.h"
#include "server/server_context.h"

namespace syncwrite::server {

// Per-connection state the commands change.
struct Session {
  Bucket* bucket = nullptr;  // after SELECT_BUCKET
  // After DCP_OPEN: the replica node this connection acknowledges for, and
  // the bucket it opened in (acks go there even if another is selected later).
  std::string dcp_replica;
  Bucket* dcp_bucket = nullptr;
};

// Fills the request's response slot later, from any thread, exactly once.
using LateReply = std::function<void(std::string response)>;

enum class Disposition {
  kAnswered,  // `out` holds the whole answer (possibly nothing)
  kDeferred,  // a LateReply will deliver it
  kClose,     // `out` holds the answer; close the connection after sending it
};

class Dispatcher {
 public:
  explicit Dispatcher(ServerContext& context) : context_(context) {}

  // Executes `request`. `defer` gives a LateReply bound to this request's
  // response slot; it is called at most once, only for kDeferred.
  Disposition execute(const protocol::Request& request, Session& session, std::string& out,
                      const std::function<LateReply()>& defer);

  // The next CAS (see the file comment). Thread-safe.
  static uint64_t nextCas() noexcept;

 private:
  Disposition mutate(const protocol::Request& request, Session& session, std::string& out,
                     const std::function<LateReply()>& defer);
  void get(const protocol::Request& request, Session& session, std::string& out);
  void stat(const protocol::Request& request, Session& session, std::string& out);
  void setParam(const protocol::Request& request, Session& session, std::string& out);
  void setVbucket(const protocol::Request& request, Session& session, std::string& out);
  void dcpOpen(const protocol::Request& request, Session& session, std::string& out);
  void seqnoAcknowledged(const protocol::Request& request, Session& session, std::string& out);

  ServerContext& context_;
};

}  // namespace syncwrite::server
