// Command: what one command handler is given, and what it says back.
//
// The dispatcher (dispatcher.h) looks a request's opcode up in a table of
// handlers; each command family (server/commands/) fills its own entries.
// A handler appends its whole answer to `out` and returns kAnswered, or, for
// an answer decided later (a SyncWrite), takes a LateReply from `defer` and
// returns kDeferred.
//
// Thread-safety: a handler runs on its connection's strand; it may touch the
// Session freely and everything else only through thread-safe members.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "server/protocol/request.h"
#include "server/sasl/exchange.h"
#include "server/server_context.h"
#include "vbucket/vbucket.h"

namespace syncwrite::server {

// Per-connection state the commands change.
struct Session {
  // What HELLO agreed to; each changes how answers are shaped or sent.
  bool said_hello = false;      // any HELLO: a Couchbase client, not a plain memcached one
  bool json = false;            // JSON: answers may carry datatype JSON
  bool xerror = false;          // XERROR: error answers may carry a context body
  bool unordered = false;       // UnorderedExecution: answers leave when decided
  bool mutation_seqno = false;  // MutationSeqno: mutation answers carry uuid + seqno

  // The authenticated user (empty: none yet), and the SASL exchange under way.
  std::string user;
  std::unique_ptr<sasl::SaslExchange> sasl;

  std::string peer;          // "address:port", for log lines
  Bucket* bucket = nullptr;  // after SELECT_BUCKET
  // After DCP_OPEN: the replica node this connection acknowledges for, and
  // the bucket it opened in (acks go there even if another is selected later).
  std::string dcp_replica;
  Bucket* dcp_bucket = nullptr;
};

// Where late answers go: a connection, or a test's recorder.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // Fills response slot `slot_seq` with `response`. Any thread.
  virtual void deliverLate(uint64_t slot_seq, std::string response) = 0;
  // False once nobody will read an answer (the connection closed), so that
  // a completion need not build one. Any thread.
  virtual bool listening() const noexcept = 0;
};

// Fills the request's response slot later, from any thread, exactly once —
// unless listening() is false, when the answer may be skipped. A sink and a
// slot number, so that binding one costs no allocation of its own (a
// std::function of this capture did).
class LateReply {
 public:
  LateReply(std::shared_ptr<ReplySink> sink, uint64_t slot_seq) noexcept
      : sink_(std::move(sink)), slot_seq_(slot_seq) {}
  void operator()(std::string response) const {
    sink_->deliverLate(slot_seq_, std::move(response));
  }
  bool listening() const noexcept { return sink_->listening(); }

 private:
  std::shared_ptr<ReplySink> sink_;
  uint64_t slot_seq_;
};

enum class Disposition {
  kAnswered,  // `out` holds the whole answer (possibly nothing)
  kDeferred,  // a LateReply will deliver it
  kClose,     // `out` holds the answer; close the connection after sending it
};

struct CommandContext {
  ServerContext& server;
  const protocol::Request& request;
  Session& session;
  std::string& out;
  // Binds a LateReply to this request's response slot. A handler calls it
  // only when its answer may come later, at most once.
  const std::function<LateReply()>& defer;
};

using CommandHandler = Disposition (*)(CommandContext& context);

struct CommandEntry {
  CommandHandler handler = nullptr;
  // False for the few commands a connection may send before it has
  // authenticated (HELLO, SASL, NOOP, VERSION, QUIT, GET_ERROR_MAP); the rest
  // are answered NoAccess until then, when the server has users.
  bool needs_auth = true;
};

// Entries by opcode byte; a null handler for an opcode no family implements.
using CommandTable = std::array<CommandEntry, 256>;

// Seconds since the Unix epoch, now (the clock item expiry is written in).
uint32_t unixNow() noexcept;

// A request's expiry as an absolute time: 0 stays 0 (never); up to 30 days
// (2,592,000 s) counts from `now`; anything larger is already absolute
// (memcached's rule, which kv_engine keeps).
uint32_t absoluteExpiry(uint32_t wire_expiry, uint32_t now) noexcept;

// The vbucket layer's state for a wire state (SET_VBUCKET, GET_ALL_VB_SEQNOS).
vbucket::VBucketState vbucketStateFor(protocol::VbucketState state) noexcept;

// Helpers the families share. Each appends one error answer to `out`.

// Success (or `status`) with `json` as the value, datatype JSON: the error
// and cluster maps, and NOT_MY_VBUCKET's map.
void answerJson(CommandContext& context, protocol::Status status, std::string_view json);

// `status` with kv_engine's error context {"error":{"context":"<message>"}}
// (no body when `message` is empty), marked JSON only when the session
// negotiated JSON.
void answerError(CommandContext& context, protocol::Status status, std::string_view message);

// 0x08: a data command before SELECT_BUCKET.
void answerNoBucket(CommandContext& context);
// 0x07: the request's vbucket is not active here (or does not exist). The
// value is the selected bucket's cluster map (datatype JSON), as kv_engine
// sends it, so a client re-routes by itself.
void answerNotMyVbucket(CommandContext& context);

// The text of 0x86 Etmpfail for a write refused because `bucket` is at its
// memory quota: which limit, the figures, and that a retry may succeed.
std::string memoryFullMessage(const Bucket& bucket);

// The bucket the connection works in: the one it selected, else the server's
// default_bucket, else null. Answers nothing.
Bucket* currentBucket(const CommandContext& context);
// As currentBucket(), but answers NoBucket when there is none.
Bucket* selectedBucket(CommandContext& context);
// The request's vbucket in the selected bucket if it is active, or null after
// answering NoBucket or NotMyVbucket.
vbucket::VBucket* activeVbucket(CommandContext& context);

}  // namespace syncwrite::server
