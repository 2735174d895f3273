#include "server/protocol/client.h"

#include <deque>

#include <absl/strings/str_cat.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "server/protocol/packet_reader.h"
#include "server/protocol/request_encoder.h"

namespace syncwrite::server::protocol {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Every blocking step is an asynchronous operation driven by io.run_one_for()
// up to a deadline: that is what gives synchronous calls a timeout. On a
// timeout the socket is closed and the aborted handlers are drained before the
// locals they point at go out of scope.
struct Client::Impl {
  explicit Impl(const ClientOptions& opts)
      : options(opts), reader(PacketReader::Direction::kResponses, opts.max_packet_size) {}

  // Runs the io_context until `done` or the deadline.
  absl::Status waitFor(const bool& done, Clock::time_point deadline, std::string_view what) {
    io.restart();
    while (!done) {
      const auto now = Clock::now();
      if (now >= deadline) {
        boost::system::error_code ignored;
        socket.close(ignored);
        resolver.cancel();
        io.restart();
        io.run();  // drain the aborted operations
        open = false;
        return absl::DeadlineExceededError(
            absl::StrCat("timed out after ", options.timeout.count(), " ms ", std::string(what)));
      }
      io.run_one_for(deadline - now);
    }
    return absl::OkStatus();
  }

  absl::Status fail(absl::Status status) {
    boost::system::error_code ignored;
    socket.close(ignored);
    open = false;
    return status;
  }

  absl::Status write(std::string_view bytes, Clock::time_point deadline) {
    if (!open) return absl::FailedPreconditionError("connection is closed");
    bool done = false;
    boost::system::error_code error;
    asio::async_write(socket, asio::buffer(bytes.data(), bytes.size()),
                      [&](const boost::system::error_code& ec, size_t) {
                        error = ec;
                        done = true;
                      });
    if (auto status = waitFor(done, deadline, "sending"); !status.ok()) return status;
    if (error) return fail(absl::UnavailableError(absl::StrCat("send failed: ", error.message())));
    return absl::OkStatus();
  }

  // Reads more bytes into the reader. kUnavailable on end of stream.
  absl::Status readSome(Clock::time_point deadline, std::string_view what) {
    if (!open) return absl::FailedPreconditionError("connection is closed");
    bool done = false;
    boost::system::error_code error;
    size_t read = 0;
    std::span<char> space = reader.prepare();
    socket.async_read_some(asio::buffer(space.data(), space.size()),
                           [&](const boost::system::error_code& ec, size_t n) {
                             error = ec;
                             read = n;
                             done = true;
                           });
    if (auto status = waitFor(done, deadline, what); !status.ok()) return status;
    reader.commit(read);
    if (error == asio::error::eof) {
      return fail(absl::UnavailableError("connection closed by server"));
    }
    if (error) return fail(absl::UnavailableError(absl::StrCat("read failed: ", error.message())));
    return absl::OkStatus();
  }

  absl::StatusOr<Response> readPacket(Clock::time_point deadline) {
    while (true) {
      PacketReader::Next next = reader.next();
      switch (next.result) {
        case PacketReader::Result::kPacket:
          return Response::fromPacket(next.packet);
        case PacketReader::Result::kBadLengths:
          return fail(absl::DataLossError("response sections exceed its body length"));
        case PacketReader::Result::kBadMagic:
          return fail(absl::DataLossError(
              absl::StrCat("not a response: magic 0x", absl::Hex(next.header.magic))));
        case PacketReader::Result::kTooBig:
          return fail(absl::DataLossError(absl::StrCat("response body of ", next.header.body_length,
                                                       " bytes is over the limit")));
        case PacketReader::Result::kNeedMore:
          break;
      }
      if (auto status = readSome(deadline, "waiting for a response"); !status.ok()) return status;
    }
  }

  // The response with `opaque`; others go to `stray`.
  absl::StatusOr<Response> readMatching(uint32_t opaque, Clock::time_point deadline) {
    while (true) {
      absl::StatusOr<Response> response = readPacket(deadline);
      if (!response.ok() || response->opaque == opaque) return response;
      stray.push_back(*std::move(response));
    }
  }

  Clock::time_point deadline() const { return Clock::now() + options.timeout; }

  ClientOptions options;
  asio::io_context io;
  tcp::socket socket{io};
  tcp::resolver resolver{io};
  PacketReader reader;
  std::deque<Response> stray;
  uint32_t last_opaque = 0;
  bool open = false;
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

absl::StatusOr<Client> Client::connect(std::string_view host, uint16_t port,
                                       const ClientOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  const std::string where = absl::StrCat(std::string(host), ":", port);
  const auto deadline = impl->deadline();

  bool done = false;
  boost::system::error_code error;
  tcp::resolver::results_type endpoints;
  impl->resolver.async_resolve(
      std::string(host), std::to_string(port),
      [&](const boost::system::error_code& ec, tcp::resolver::results_type results) {
        error = ec;
        endpoints = std::move(results);
        done = true;
      });
  if (auto status = impl->waitFor(done, deadline, "resolving"); !status.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat("cannot connect to ", where, ": ", status.message()));
  }
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", where, ": ", error.message()));
  }
  done = false;
  asio::async_connect(impl->socket, endpoints,
                      [&](const boost::system::error_code& ec, const tcp::endpoint&) {
                        error = ec;
                        done = true;
                      });
  if (auto status = impl->waitFor(done, deadline, "connecting"); !status.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat("cannot connect to ", where, ": ", status.message()));
  }
  if (error) {
    return absl::UnavailableError(absl::StrCat("cannot connect to ", where, ": ", error.message()));
  }
  boost::system::error_code ignored;
  impl->socket.set_option(tcp::no_delay(true), ignored);  // requests are small and awaited
  impl->open = true;
  return Client(std::move(impl));
}

absl::StatusOr<Client> Client::connectToBucket(std::string_view host, uint16_t port,
                                               std::string_view bucket, std::string_view agent,
                                               const ClientOptions& options) {
  absl::StatusOr<Client> client = connect(host, port, options);
  if (!client.ok()) return client.status();
  const std::string where = absl::StrCat(std::string(host), ":", port);
  auto located = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
  };
  if (auto hello = client->hello(kClientFeatures, agent); !hello.ok()) {
    return located(hello.status());
  }
  if (!options.user.empty()) {
    absl::StatusOr<Response> authed = client->saslPlain(options.user, options.password);
    if (!authed.ok()) return located(authed.status());
    if (!authed->ok()) {
      return absl::UnauthenticatedError(absl::StrCat(where, ": user \"", options.user,
                                                     "\": authentication failed (",
                                                     std::string(describe(authed->status)), ")"));
    }
  }
  if (bucket.empty()) return client;
  absl::StatusOr<Response> selected = client->selectBucket(bucket);
  if (!selected.ok()) return located(selected.status());
  if (!selected->ok()) {
    const std::string context = selected->errorContext();
    return absl::NotFoundError(
        absl::StrCat(where, ": no bucket \"", std::string(bucket),
                     "\": ", std::string(describe(selected->status)),
                     context.empty() ? "" : absl::StrCat(" (server: ", context, ")")));
  }
  return client;
}

uint32_t Client::nextOpaque() noexcept {
  if (++impl_->last_opaque == 0) ++impl_->last_opaque;
  return impl_->last_opaque;
}

bool Client::isOpen() const noexcept { return impl_ && impl_->open; }

int Client::nativeHandle() noexcept {
  return impl_ && impl_->open ? static_cast<int>(impl_->socket.native_handle()) : -1;
}

void Client::close() noexcept {
  if (!impl_) return;
  boost::system::error_code ignored;
  impl_->socket.close(ignored);
  impl_->open = false;
}

absl::Status Client::sendRaw(std::string_view bytes) {
  return impl_->write(bytes, impl_->deadline());
}

absl::Status Client::send(const RequestFields& request) {
  std::string bytes;
  appendRequest(bytes, request);
  return sendRaw(bytes);
}

absl::StatusOr<Response> Client::readResponse() {
  if (!impl_->stray.empty()) {
    Response response = std::move(impl_->stray.front());
    impl_->stray.pop_front();
    return response;
  }
  return impl_->readPacket(impl_->deadline());
}

absl::Status Client::waitForClose() {
  const auto deadline = impl_->deadline();
  while (impl_->open) {
    absl::Status status = impl_->readSome(deadline, "waiting for the server to close");
    if (absl::IsUnavailable(status)) return absl::OkStatus();
    if (!status.ok()) return status;
    if (impl_->reader.buffered() > 0) {
      return impl_->fail(absl::DataLossError("server sent data instead of closing"));
    }
  }
  return absl::OkStatus();
}

std::vector<Response> Client::takeStrayResponses() {
  std::vector<Response> out(std::make_move_iterator(impl_->stray.begin()),
                            std::make_move_iterator(impl_->stray.end()));
  impl_->stray.clear();
  return out;
}

absl::StatusOr<Response> Client::call(
    absl::FunctionRef<void(std::string& out, uint32_t opaque)> encode) {
  std::string bytes;
  const uint32_t opaque = nextOpaque();
  encode(bytes, opaque);
  const auto deadline = impl_->deadline();
  if (auto status = impl_->write(bytes, deadline); !status.ok()) return status;
  return impl_->readMatching(opaque, deadline);
}

absl::StatusOr<std::vector<Feature>> Client::hello(std::span<const Feature> features,
                                                   std::string_view agent) {
  absl::StatusOr<Response> response =
      call([&](std::string& out, uint32_t opaque) { appendHello(out, opaque, agent, features); });
  if (!response.ok()) return response.status();
  if (!response->ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "HELLO refused: ", std::string(toString(response->status)), " ", response->errorContext()));
  }
  return decodeFeatures(response->value);
}

absl::StatusOr<Response> Client::selectBucket(std::string_view bucket) {
  return call([&](std::string& out, uint32_t opaque) { appendSelectBucket(out, opaque, bucket); });
}

absl::StatusOr<Response> Client::saslPlain(std::string_view user, std::string_view password) {
  return call(
      [&](std::string& out, uint32_t opaque) { appendSaslPlain(out, opaque, user, password); });
}

absl::StatusOr<Response> Client::get(uint16_t vbucket, std::string_view key) {
  return call([&](std::string& out, uint32_t opaque) { appendGet(out, opaque, vbucket, key); });
}

absl::StatusOr<Response> Client::store(Opcode opcode, uint16_t vbucket, std::string_view key,
                                       std::string_view value, const MutationOptions& options) {
  return call([&](std::string& out, uint32_t opaque) {
    appendStore(out, opcode, opaque, vbucket, key, value, options);
  });
}

absl::StatusOr<Response> Client::set(uint16_t vbucket, std::string_view key, std::string_view value,
                                     const MutationOptions& options) {
  return store(Opcode::kSet, vbucket, key, value, options);
}

absl::StatusOr<Response> Client::add(uint16_t vbucket, std::string_view key, std::string_view value,
                                     const MutationOptions& options) {
  return store(Opcode::kAdd, vbucket, key, value, options);
}

absl::StatusOr<Response> Client::replace(uint16_t vbucket, std::string_view key,
                                         std::string_view value, const MutationOptions& options) {
  return store(Opcode::kReplace, vbucket, key, value, options);
}

absl::StatusOr<Response> Client::del(uint16_t vbucket, std::string_view key,
                                     const MutationOptions& options) {
  return call(
      [&](std::string& out, uint32_t opaque) { appendDelete(out, opaque, vbucket, key, options); });
}

absl::StatusOr<Response> Client::noop() {
  return call([&](std::string& out, uint32_t opaque) { appendSimple(out, Opcode::kNoop, opaque); });
}

absl::StatusOr<Response> Client::version() {
  return call(
      [&](std::string& out, uint32_t opaque) { appendSimple(out, Opcode::kVersion, opaque); });
}

absl::StatusOr<Response> Client::quit() {
  return call([&](std::string& out, uint32_t opaque) { appendSimple(out, Opcode::kQuit, opaque); });
}

std::optional<std::string> StatsReply::find(std::string_view key) const {
  for (const auto& [name, value] : stats) {
    if (name == key) return value;
  }
  return std::nullopt;
}

absl::StatusOr<StatsReply> Client::stats(std::string_view group) {
  std::string bytes;
  const uint32_t opaque = nextOpaque();
  appendStat(bytes, opaque, group);
  const auto deadline = impl_->deadline();
  if (auto status = impl_->write(bytes, deadline); !status.ok()) return status;
  StatsReply reply;
  while (true) {
    absl::StatusOr<Response> response = impl_->readMatching(opaque, deadline);
    if (!response.ok()) return response.status();
    if (!response->ok()) {
      reply.status = response->status;
      reply.error_context = response->errorContext();
      reply.stats.clear();
      return reply;
    }
    if (response->key.empty() && response->value.empty()) return reply;  // terminator
    reply.stats.emplace_back(std::move(response->key), std::move(response->value));
  }
}

absl::StatusOr<Response> Client::setParam(ParamType type, std::string_view key,
                                          std::string_view value) {
  return call(
      [&](std::string& out, uint32_t opaque) { appendSetParam(out, opaque, type, key, value); });
}

absl::StatusOr<Response> Client::setVbucketState(uint16_t vbucket, VbucketState state,
                                                 std::string_view value) {
  return call([&](std::string& out, uint32_t opaque) {
    appendSetVbucket(out, opaque, vbucket, state, value);
  });
}

absl::StatusOr<Response> Client::dcpOpen(std::string_view name, uint32_t flags) {
  return call([&](std::string& out, uint32_t opaque) { appendDcpOpen(out, opaque, name, flags); });
}

absl::StatusOr<std::vector<VbSeqno>> Client::allVbSeqnos(std::optional<uint32_t> state) {
  absl::StatusOr<Response> response =
      call([&](std::string& out, uint32_t opaque) { appendGetAllVbSeqnos(out, opaque, state); });
  if (!response.ok()) return response.status();
  if (!response->ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("GET_ALL_VB_SEQNOS refused: ", std::string(toString(response->status)), " ",
                     response->errorContext()));
  }
  auto entries = parseVbSeqnos(response->value);
  if (!entries) {
    return absl::DataLossError(absl::StrCat("GET_ALL_VB_SEQNOS answered ", response->value.size(),
                                            " bytes, not whole 10-byte entries"));
  }
  return std::move(*entries);
}

absl::Status Client::seqnoAck(uint16_t vbucket, uint64_t prepared_seqno) {
  std::string bytes;
  appendSeqnoAcknowledged(bytes, nextOpaque(), vbucket, prepared_seqno);
  return sendRaw(bytes);
}

}  // namespace syncwrite::server::protocol
