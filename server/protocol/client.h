// Client: a blocking MCBP client over one TCP connection (boost.asio).
//
// For the CLI, integration tests and the idle-CPU harness. Every call blocks
// until it is done or `ClientOptions::timeout` has passed (the hang guard: a
// silent or stalled server yields kDeadlineExceeded, never a hang); after a
// transport error or timeout the connection is closed and every later call
// fails with kFailedPrecondition.
//
// Errors are values, on two levels:
//   - absl::Status for the transport: kUnavailable (cannot connect, connection
//     closed by the peer, I/O error), kDeadlineExceeded (timeout), kDataLoss
//     (the server sent something that is not a response packet),
//     kFailedPrecondition (the connection is already closed).
//   - Response::status for what the server answered (KeyNotFound,
//     SyncWriteAmbiguous, ...): the call itself succeeded.
//
// Pipelining: build several requests with request_encoder.h into one buffer,
// sendRaw() it, then readResponse() once per expected response; the server
// answers in request order. The command methods (get(), set(), ...) send one
// request with a fresh opaque and read until the response with that opaque;
// any response read on the way with another opaque (an unread pipelined
// answer, or an error answer to a seqnoAck()) is kept for
// takeStrayResponses() and readResponse().
//
// Not thread-safe: one thread uses a Client at a time. Move-only; a moved-from
// Client may only be destroyed or assigned to.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "server/protocol/command_values.h"
#include "server/protocol/feature.h"
#include "server/protocol/request_encoder.h"
#include "server/protocol/response.h"

namespace syncwrite::server::protocol {

// What our clients ask for in HELLO: extended errors, SELECT_BUCKET, frame
// infos (for durability) and synchronous replication.
inline constexpr Feature kClientFeatures[] = {Feature::kXerror, Feature::kSelectBucket,
                                              Feature::kAltRequestSupport,
                                              Feature::kSyncReplication};

struct ClientOptions {
  // Bound on connect and on each call (send + reading its whole answer).
  std::chrono::milliseconds timeout{30'000};
  // Largest response body accepted; a bigger one is kDataLoss.
  size_t max_packet_size = size_t{64} * 1024 * 1024;
  // The credentials connectToBucket() authenticates with (SASL PLAIN); the
  // embedded default configuration's user by default. An empty user skips
  // authentication. A server with no users accepts PLAIN without checking.
  std::string user = "Administrator";
  std::string password = "password";
};

// A STAT answer: the stats in the order the server sent them, or the error
// response that replaced them.
struct StatsReply {
  Status status = Status::kSuccess;
  std::string error_context;  // Response::errorContext() of an error answer
  std::vector<std::pair<std::string, std::string>> stats;

  bool ok() const noexcept { return status == Status::kSuccess; }
  // The value of stat `key`, or nullopt. O(stats).
  std::optional<std::string> find(std::string_view key) const;
};

class Client {
 public:
  // Resolves `host` and connects within options.timeout. Errors:
  // kUnavailable "cannot connect to HOST:PORT: <reason>", kDeadlineExceeded.
  static absl::StatusOr<Client> connect(std::string_view host, uint16_t port,
                                        const ClientOptions& options = {});

  // The start of every session: connect(), HELLO with kClientFeatures and
  // `agent`, SASL PLAIN with options.user (unless it is empty), then
  // SELECT_BUCKET `bucket` unless it is empty. Errors: those of connect() as
  // they are; after it, the failing step's prefixed with "HOST:PORT: ",
  // kUnauthenticated "HOST:PORT: user \"U\": authentication failed" when the
  // server refuses the credentials, and kNotFound "HOST:PORT: no bucket
  // \"B\": <status description> (server: <context>)" when it refuses the
  // bucket.
  static absl::StatusOr<Client> connectToBucket(std::string_view host, uint16_t port,
                                                std::string_view bucket, std::string_view agent,
                                                const ClientOptions& options = {});

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();  // closes the connection without sending QUIT

  // HELLO with `agent` as key: the features the server agreed to, or
  // kFailedPrecondition with the status name if the server refused HELLO.
  absl::StatusOr<std::vector<Feature>> hello(std::span<const Feature> features,
                                             std::string_view agent = "syncwrite-client");

  absl::StatusOr<Response> selectBucket(std::string_view bucket);

  // SASL_AUTH with mechanism PLAIN: Success, or AuthError.
  absl::StatusOr<Response> saslPlain(std::string_view user, std::string_view password);

  // GET: on Success, value = the document, cas = its CAS, extras = 4-byte flags.
  absl::StatusOr<Response> get(uint16_t vbucket, std::string_view key);

  // SET/ADD/REPLACE/DELETE, durable when options.durability is set. A durable
  // write's answer comes when it resolves: Success with the CAS on commit,
  // SyncWriteAmbiguous on timeout — so make options.timeout longer than the
  // durability timeout asked for.
  absl::StatusOr<Response> set(uint16_t vbucket, std::string_view key, std::string_view value,
                               const MutationOptions& options = {});
  absl::StatusOr<Response> add(uint16_t vbucket, std::string_view key, std::string_view value,
                               const MutationOptions& options = {});
  absl::StatusOr<Response> replace(uint16_t vbucket, std::string_view key, std::string_view value,
                                   const MutationOptions& options = {});
  absl::StatusOr<Response> del(uint16_t vbucket, std::string_view key,
                               const MutationOptions& options = {});

  absl::StatusOr<Response> noop();
  absl::StatusOr<Response> version();  // value = the version text

  // STAT `group` ("" = general): reads the whole answer up to its terminator.
  absl::StatusOr<StatsReply> stats(std::string_view group = "");

  // SET_PARAM: a refused change answers kEinval with the config layer's
  // message in errorContext().
  absl::StatusOr<Response> setParam(ParamType type, std::string_view key, std::string_view value);
  absl::StatusOr<Response> setParam(std::string_view key, std::string_view value) {
    return setParam(ParamType::kFlush, key, value);
  }

  // `value`: kv_engine's {"topology": ...}, or empty.
  absl::StatusOr<Response> setVbucketState(uint16_t vbucket, VbucketState state,
                                           std::string_view value = {});

  // DCP_OPEN: makes this connection the replica `name` (producer flag set by
  // default), so its seqnoAck()s count for that node.
  absl::StatusOr<Response> dcpOpen(std::string_view name, uint32_t flags = kDcpOpenProducer);

  // DCP_SEQNO_ACKNOWLEDGED: sends only. kv_engine's producer answers nothing
  // on success (docs/dcp/documentation/commands/seqno-acknowledged.md); an
  // error answer (e.g. NotMyVbucket) arrives later and lands in
  // takeStrayResponses() or a readResponse().
  absl::Status seqnoAck(uint16_t vbucket, uint64_t prepared_seqno);

  // GET_ALL_VB_SEQNOS: every vbucket's high seqno (state nullopt: those not
  // dead; else 0 alive or a VbucketState's value). kFailedPrecondition with the
  // status name and error context when refused; kDataLoss for a value that is
  // not whole entries.
  absl::StatusOr<std::vector<VbSeqno>> allVbSeqnos(std::optional<uint32_t> state = std::nullopt);

  // QUIT: sends it and waits for the answer; the server then closes.
  absl::StatusOr<Response> quit();

  // Low level, for pipelining and malformed-input tests.
  // Writes `bytes` as they are.
  absl::Status sendRaw(std::string_view bytes);
  // Sends one request (opaque as given).
  absl::Status send(const RequestFields& request);
  // The next response in arrival order (stray responses first).
  absl::StatusOr<Response> readResponse();
  // Waits until the server closes the connection: OkStatus when it does
  // (reading only end-of-stream; any data first is kDataLoss), kDeadlineExceeded
  // if it stays open for options.timeout.
  absl::Status waitForClose();
  // A fresh opaque (never 0), for requests built by the caller.
  uint32_t nextOpaque() noexcept;

  // Responses read while waiting for another opaque, oldest first.
  std::vector<Response> takeStrayResponses();

  bool isOpen() const noexcept;
  void close() noexcept;

  // The socket's file descriptor (-1 once closed), for a caller that waits on
  // many clients at once with poll/epoll (bench/timeout_precision). Wait only
  // for readability on it, and read through readResponse(): never read or
  // write the descriptor itself — unless the caller takes the connection over
  // for good (bench/mcbp_load, after the session is set up): from its first
  // read or write on, it calls no method but the destructor.
  int nativeHandle() noexcept;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  // One request and its answer: `encode` appends the request with the opaque
  // it is given; the answer is the response with that opaque.
  absl::StatusOr<Response> call(absl::FunctionRef<void(std::string& out, uint32_t opaque)> encode);
  absl::StatusOr<Response> store(Opcode opcode, uint16_t vbucket, std::string_view key,
                                 std::string_view value, const MutationOptions& options);

  std::unique_ptr<Impl> impl_;
};

}  // namespace syncwrite::server::protocol
