// Command: what one command handler is given, and what it says back.
//
// The dispatcher (dispatcher.h) looks a request's opcode up in a table of
// handlers; each command family (server/commands/) fills its own entries.
// A handler appends its whole answer to `out` and returns kAnswered, or, for
// an answer decided later (a SyncWrite), takes a LateReply from `defer`,
// leaves the answer's shape in `late_shape` and returns kDeferred.
//
// Thread-safety: a handler runs on its connection's I/O thread; it may touch the
// Session freely and everything else only through thread-safe members.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "durability/sync_write.h"
#include "server/protocol/request.h"
#include "server/sasl/exchange.h"
#include "server/server_context.h"
#include "vbucket/vbucket.h"

namespace syncwrite::server {

class DcpProducer;

// Per-connection state the commands change.
struct Session {
  // What HELLO agreed to; each changes how answers are shaped or sent.
  bool said_hello = false;      // any HELLO: a Couchbase client, not a plain memcached one
  bool json = false;            // JSON: answers may carry datatype JSON
  bool xerror = false;          // XERROR: every status as it is (else xerror_remap.h)
  bool unordered = false;       // UnorderedExecution: answers leave when decided
  bool mutation_seqno = false;  // MutationSeqno: mutation answers carry uuid + seqno
  bool xattr = false;           // XATTR: sub-document specs may name xattr paths

  // The authenticated user (empty: none yet), and the SASL exchange under way.
  std::string user;
  std::unique_ptr<sasl::SaslExchange> sasl;

  std::string peer;          // "address:port", for log lines
  Bucket* bucket = nullptr;  // after SELECT_BUCKET
  // After DCP_OPEN: the replica node this connection acknowledges for, and
  // the bucket it opened in (acks go there even if another is selected later).
  std::string dcp_replica;
  Bucket* dcp_bucket = nullptr;
  // After DCP_OPEN: the connection's producer (dcp_producer.h), which
  // streams to that replica once it asks for streams.
  std::shared_ptr<DcpProducer> dcp_producer;
  // Schedules the connection's writing of what its producer has, on its I/O
  // thread; any thread. Set by the connection (empty in tests without one).
  std::function<void()> dcp_wake;
};

// How a deferred mutation is answered once it resolves: its CAS, with
// MutationSeqno the vbucket uuid and the commit's seqno as extras, and for
// INCREMENT/DECREMENT the new counter as an 8-byte value (for a sub-document
// COUNTER, as decimal text: alone for SUBDOC_COUNTER, as the multi-mutation
// result entry of spec `counter_index` for SUBDOC_MULTI_MUTATION); a quiet
// mutation answers nothing on success. Whoever holds the request's answer slot keeps
// one per SyncWrite in flight (a connection: packed in its AnswerSlot,
// answer_slot.h), so it is kept small: 32 bytes, no string (docs/memory.md).
struct LateAnswerShape {
  uint64_t vbucket_uuid = 0;  // sent with the seqno when has_uuid
  uint64_t counter = 0;       // INCREMENT/DECREMENT: the answer's value, when has_counter
  uint32_t opaque = 0;
  protocol::Opcode opcode = protocol::Opcode::kSet;
  bool quiet = false;
  bool has_uuid = false;
  bool has_counter = false;
  bool zero_cas = false;
  bool json = false;          // the connection negotiated JSON: error bodies are marked so
  bool xerror = false;        // the connection negotiated XERROR: it may be told SyncWriteAmbiguous
  uint8_t counter_index = 0;  // SUBDOC_MULTI_MUTATION: the COUNTER spec's index
};
static_assert(sizeof(LateAnswerShape) == 32, "LateAnswerShape grew: update docs/memory.md");

// Appends the answer `shape` describes for a SyncWrite resolved as
// `resolution`: Success with its CAS when it committed (nothing for a quiet
// one), else SyncWriteAmbiguous 0xa3 with the reason (commands/mutation.cc).
void appendLateAnswer(std::string& out, const LateAnswerShape& shape,
                      const durability::Resolution& resolution);

// Whether that answer may be sent: always to a connection with XERROR; to
// one without, only what protocol::statusWithoutXerror lets through (a
// commit's Success, never SyncWriteAmbiguous). False: the connection closes
// instead of answering (xerror_remap.h).
bool lateAnswerMayBeSent(const LateAnswerShape& shape,
                         const durability::Resolution& resolution) noexcept;

// The size of what appendLateAnswer appends, without building it.
size_t lateAnswerSize(const LateAnswerShape& shape,
                      const durability::Resolution& resolution) noexcept;

// Where late answers go: a connection, or a test's recorder.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // The deferred request `ticket` resolved: build its answer from the shape
  // the handler left (CommandContext::late_shape) and send it, or drop it if
  // nobody will read it. Any thread; exactly once per deferred request.
  virtual void resolved(uint64_t ticket, const durability::Resolution& resolution) = 0;
};

// A deferred request's completion: a sink and the request's ticket, 16
// bytes and trivially copyable, so that a durability::Completion holds it
// in place (it allocates for any other callable) and a
// pending SyncWrite costs the server no allocation for it. It owns nothing:
// the sink must outlive every LateReply of a request that was deferred
// (Connection holds itself alive while it owes answers), and a LateReply of
// a request answered at once is never called.
class LateReply {
 public:
  LateReply(ReplySink* sink, uint64_t ticket) noexcept : sink_(sink), ticket_(ticket) {}
  void operator()(const durability::Resolution& resolution) const {
    sink_->resolved(ticket_, resolution);
  }

 private:
  ReplySink* sink_;
  uint64_t ticket_;
};
static_assert(std::is_trivially_copyable_v<LateReply> && sizeof(LateReply) <= 16,
              "a LateReply must stay inside durability::Completion's inline storage");

enum class Disposition {
  kAnswered,  // `out` holds the whole answer (possibly nothing)
  kDeferred,  // a LateReply will deliver it
  kClose,     // `out` holds the answer; close the connection after sending it
  // Nothing of this request's answer is in `out`: close the connection,
  // sending only the answers already ready (kv_engine's disconnect of a
  // client without XERROR, xerror_remap.h).
  kDisconnect,
};

struct CommandContext {
  ServerContext& server;
  const protocol::Request& request;
  Session& session;
  std::string& out;
  // Binds a LateReply to this request's response slot. A handler calls it
  // only when its answer may come later, at most once.
  const std::function<LateReply()>& defer;
  // A handler that returns kDeferred says here how the answer is to be built.
  LateAnswerShape& late_shape;
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

// Success (or `status`) with `json` as the value: the error and cluster maps,
// and NOT_MY_VBUCKET's map. Datatype JSON only for a connection that
// negotiated JSON, as kv_engine masks every answer's datatype by the
// connection's (Connection::getEnabledDatatypes).
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

// True when the server has users and `session` has not authenticated yet:
// the dispatcher then refuses every command that needs authentication.
bool mustAuthenticateFirst(const Session& session, const ServerContext& server) noexcept;

// True when the session's user may access the bucket named `bucket`, which
// need not exist: always on a server without users, and for a user without
// a "buckets" list (server_config.h); else when the list names it.
bool mayAccessBucket(const Session& session, const ServerContext& server,
                     std::string_view bucket) noexcept;

// The bucket a session works in: the one it selected, else the server's
// default_bucket if its user may access it, else null.
Bucket* sessionBucket(const Session& session, const ServerContext& server) noexcept;

// sessionBucket() of the request's connection. Answers nothing.
Bucket* currentBucket(const CommandContext& context);
// As currentBucket(), but answers NoBucket when there is none.
Bucket* selectedBucket(CommandContext& context);
// The request's vbucket in the selected bucket if it is active, or null after
// answering NoBucket or NotMyVbucket.
vbucket::VBucket* activeVbucket(CommandContext& context);

}  // namespace syncwrite::server
