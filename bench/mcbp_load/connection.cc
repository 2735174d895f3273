#include "bench/mcbp_load/connection.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <utility>

#include <absl/strings/str_cat.h>

#include "server/protocol/request_encoder.h"
#include "server/protocol/vbucket_hash.h"

namespace syncwrite::bench::mcbp_load {

namespace protocol = server::protocol;

namespace {

constexpr size_t kHeaderSize = 24;
constexpr size_t kRecvBufferSize = size_t{256} * 1024;
constexpr uint8_t kResponseMagic = 0x81;
constexpr uint8_t kAltResponseMagic = 0x18;  // with framing extras (length at byte 2)
constexpr std::chrono::milliseconds kHangGuard{30'000};

uint32_t load32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

uint16_t load16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>((u[0] << 8) | u[1]);
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// "key<N>" into `key`, reusing its capacity.
void formatKey(std::string& key, uint32_t n) {
  char digits[10];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  key.assign("key");
  key.append(digits, end);
}

}  // namespace

Workload Workload::build(const LoadOptions& options) {
  Workload workload;
  workload.value.assign(options.value_size, 'v');
  if (options.value_json) {
    // {"v":"vvv..."}: exactly value_size bytes once it has room for the frame.
    constexpr absl::string_view kOpen = R"({"v":")";
    constexpr absl::string_view kClose = R"("})";
    const size_t inner = options.value_size > kOpen.size() + kClose.size()
                             ? options.value_size - kOpen.size() - kClose.size()
                             : 0;
    workload.value = absl::StrCat(kOpen, std::string(inner, 'v'), kClose);
  }
  workload.vbucket_of_key.assign(options.keys, 0);
  if (!options.plain_memcached) {
    std::string key;
    for (uint32_t n = 0; n < options.keys; ++n) {
      formatKey(key, n);
      workload.vbucket_of_key[n] = protocol::vbucketOfKey(key, options.vbuckets);
    }
  }
  return workload;
}

Connection::Connection(const LoadOptions& options, const Workload& workload, unsigned index,
                       protocol::Client client)
    : options_(options),
      workload_(workload),
      index_(index),
      client_(std::move(client)),
      fd_(client_.nativeHandle()),
      random_(options.seed * 1'000'003 + index),
      next_key_(index),
      in_(kRecvBufferSize) {}

absl::StatusOr<std::unique_ptr<Connection>> Connection::open(const LoadOptions& options,
                                                             const Workload& workload,
                                                             unsigned index) {
  protocol::ClientOptions client_options;
  client_options.timeout = kHangGuard;
  client_options.user = options.user;
  client_options.password = options.password;
  absl::StatusOr<protocol::Client> client =
      options.plain_memcached
          ? protocol::Client::connect(options.host, options.port, client_options)
          : protocol::Client::connectToBucket(options.host, options.port, options.bucket,
                                              "mcbp_load", client_options);
  if (!client.ok()) {
    return absl::Status(client.status().code(),
                        absl::StrCat("connection ", index, ": ", client.status().message()));
  }
  std::unique_ptr<Connection> connection(
      new Connection(options, workload, index, std::move(*client)));
  const int flags = ::fcntl(connection->fd_, F_GETFL);
  if (flags < 0 || ::fcntl(connection->fd_, F_SETFL, flags | O_NONBLOCK) < 0) {
    return connection->failure(absl::StrCat("fcntl O_NONBLOCK: ", std::strerror(errno)));
  }
  return connection;
}

absl::Status Connection::failure(std::string_view what) const {
  return absl::UnavailableError(absl::StrCat("connection ", index_, " to ", options_.host, ":",
                                             options_.port, ": ", std::string(what)));
}

bool Connection::appendRandomRequest(std::string& out, uint32_t opaque, bool quiet) {
  uint32_t n = 0;
  if (options_.keys_in_order) {
    // This connection's share, in order: index, index + connections, ...
    n = static_cast<uint32_t>(next_key_ % options_.keys);
    next_key_ += options_.connections;
  } else {
    n = std::uniform_int_distribution<uint32_t>(0, options_.keys - 1)(random_);
  }
  formatKey(key_, n);
  const uint16_t vbucket = workload_.vbucket_of_key[n];
  protocol::MutationOptions mutation;
  if (options_.durability != durability::Level::kNone) {
    protocol::DurabilitySpec spec;
    spec.level = options_.durability;
    if (options_.durability_timeout_ms != 0) spec.timeout_ms = options_.durability_timeout_ms;
    mutation.durability = spec;
  }
  Op op = options_.op;
  if (op == Op::kMix) {
    op = std::bernoulli_distribution(options_.set_ratio)(random_) ? Op::kSet : Op::kGet;
  }
  using protocol::Opcode;
  switch (op) {
    case Op::kGet:
      if (quiet) {
        protocol::appendRequest(
            out, {.opcode = Opcode::kGetKQ, .opaque = opaque, .vbucket = vbucket, .key = key_});
      } else {
        protocol::appendGet(out, opaque, vbucket, key_);
      }
      return true;
    case Op::kDelete:
      if (quiet) {
        protocol::appendRequest(out, {.opcode = Opcode::kDeleteQ,
                                      .opaque = opaque,
                                      .vbucket = vbucket,
                                      .durability = mutation.durability,
                                      .key = key_});
      } else {
        protocol::appendDelete(out, opaque, vbucket, key_, mutation);
      }
      return false;
    case Op::kAdd:
      protocol::appendStore(out, quiet ? Opcode::kAddQ : Opcode::kAdd, opaque, vbucket, key_,
                            workload_.value, mutation);
      return false;
    case Op::kReplace:
      protocol::appendStore(out, quiet ? Opcode::kReplaceQ : Opcode::kReplace, opaque, vbucket,
                            key_, workload_.value, mutation);
      return false;
    case Op::kSet:
    case Op::kMix:
      protocol::appendStore(out, quiet ? Opcode::kSetQ : Opcode::kSet, opaque, vbucket, key_,
                            workload_.value, mutation);
      return false;
  }
  return false;
}

absl::Status Connection::startPreload() {
  preload_next_ = index_;
  return start(Phase::kPreload, /*quiet=*/false);
}

absl::Status Connection::startRun(uint64_t budget, const std::atomic<bool>& stop) {
  budget_ = budget;
  sent_ = 0;
  stop_ = &stop;
  if (options_.quiet_batch > 0) quiet_batches_.assign(options_.depth, QuietBatch{});
  return start(Phase::kRun, /*quiet=*/options_.quiet_batch > 0);
}

bool Connection::next(std::string& out, uint32_t opaque) {
  if (phase_ == Phase::kPreload) {
    if (preload_next_ >= options_.keys) return false;
    const auto n = static_cast<uint32_t>(preload_next_);
    formatKey(key_, n);
    protocol::appendStore(out, protocol::Opcode::kSet, opaque, workload_.vbucket_of_key[n], key_,
                          workload_.value);
    preload_next_ += options_.connections;
    return true;
  }
  if (stop_->load(std::memory_order_relaxed) || (budget_ != 0 && sent_ >= budget_)) return false;
  const uint32_t batch = options_.quiet_batch;
  if (batch == 0) {
    appendRandomRequest(out, opaque, /*quiet=*/false);
    ++sent_;
    return true;
  }
  QuietBatch& slot = quiet_batches_[opaque];
  slot = QuietBatch{};
  for (uint32_t i = 0; i < batch; ++i) {
    ++(appendRandomRequest(out, opaque, /*quiet=*/true) ? slot.reads : slot.mutations);
  }
  protocol::appendSimple(out, protocol::Opcode::kNoop, opaque);
  sent_ += batch;
  return true;
}

void Connection::finishQuietBatch(QuietBatch& batch, bool timed) {
  StatusCounts& statuses = timed ? stats_.statuses : stats_.preload_statuses;
  constexpr uint16_t kSuccess = 0x00;
  constexpr uint16_t kKeyNotFound = 0x01;
  // A silent mutation succeeded; a silent GETKQ missed (memcached's rules).
  statuses.add(kSuccess, batch.mutations - std::min(batch.mutations, batch.answered_mutations));
  statuses.add(kKeyNotFound, batch.reads - std::min(batch.reads, batch.answered_reads));
  if (timed) stats_.ops += batch.reads + batch.mutations;
  batch = QuietBatch{};
}

absl::Status Connection::sendSome() {
  while (out_sent_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n > 0) {
      out_sent_ += static_cast<size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return absl::OkStatus();  // the rest goes when the socket is writable
    } else if (errno != EINTR) {
      return failure(absl::StrCat("send: ", std::strerror(errno)));
    }
  }
  out_.clear();
  out_sent_ = 0;
  return absl::OkStatus();
}

absl::Status Connection::start(Phase phase, bool quiet) {
  phase_ = phase;
  timed_ = phase == Phase::kRun;
  quiet_ = quiet;
  more_ = true;
  const unsigned depth = options_.depth;
  sent_ns_.assign(depth, 0);
  in_flight_.assign(depth, 0);
  fresh_.clear();
  fresh_.reserve(depth);
  outstanding_ = 0;
  last_read_ns_ = nowNs();
  for (uint32_t slot = 0; slot < depth; ++slot) fill(slot);
  return sendFresh();
}

void Connection::fill(uint32_t slot) {
  if (!more_) return;
  if (!next(out_, slot)) {
    more_ = false;
    return;
  }
  in_flight_[slot] = 1;
  ++outstanding_;
  fresh_.push_back(slot);
}

absl::Status Connection::sendFresh() {
  if (fresh_.empty()) return absl::OkStatus();
  const int64_t now = nowNs();
  for (uint32_t slot : fresh_) sent_ns_[slot] = now;
  fresh_.clear();
  return sendSome();
}

absl::Status Connection::checkHang() const {
  const int64_t guard_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          kHangGuard + std::chrono::milliseconds(options_.durability_timeout_ms))
          .count();
  if (outstanding_ == 0 || nowNs() - last_read_ns_ < guard_ns) return absl::OkStatus();
  return failure(absl::StrCat("no response for ", guard_ns / 1'000'000, " ms with ", outstanding_,
                              " requests in flight"));
}

absl::Status Connection::onReady(bool readable, bool writable) {
  if (writable && wantsWrite()) {
    if (absl::Status s = sendSome(); !s.ok()) return s;
  }
  if (!readable) return absl::OkStatus();
  const ssize_t n = ::recv(fd_, in_.data() + in_size_, in_.size() - in_size_, 0);
  if (n > 0) {
    const int64_t now = nowNs();
    last_read_ns_ = now;
    in_size_ += static_cast<size_t>(n);
    if (absl::Status s = handleResponses(now); !s.ok()) return s;
    if (timed_) stats_.progress.store(stats_.ops, std::memory_order_relaxed);
    return sendFresh();
  }
  if (n == 0) {
    return failure(absl::StrCat("the server closed the connection with ", outstanding_,
                                " requests in flight"));
  }
  if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return absl::OkStatus();
  return failure(absl::StrCat("recv: ", std::strerror(errno)));
}

absl::Status Connection::handleResponses(int64_t now_ns) {
  const unsigned depth = options_.depth;
  const auto slow_log_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.slow_log).count());
  size_t pos = 0;
  while (in_size_ - pos >= kHeaderSize) {
    const char* header = in_.data() + pos;
    const auto magic = static_cast<uint8_t>(header[0]);
    if (magic != kResponseMagic && magic != kAltResponseMagic) {
      return failure(absl::StrCat("the server sent a packet with magic 0x",
                                  absl::Hex(magic, absl::kZeroPad2),
                                  ", not a response (0x81 or 0x18)"));
    }
    const size_t total = kHeaderSize + load32(header + 8);
    if (in_size_ - pos < total) {
      if (total > in_.size()) in_.resize(total);  // a value bigger than the buffer
      break;
    }
    const uint32_t opaque = load32(header + 12);
    if (opaque >= depth || !in_flight_[opaque]) {
      return failure(
          absl::StrCat("the server answered opaque ", opaque, ", which no request in flight has"));
    }
    const uint16_t status = load16(header + 6);
    const auto opcode = static_cast<protocol::Opcode>(header[1]);
    if (quiet_ && opcode != protocol::Opcode::kNoop) {
      // A quiet request that answered (a failure, or a GETKQ hit): its
      // batch stays in flight until the NOOP.
      QuietBatch& batch = quiet_batches_[opaque];
      ++(opcode == protocol::Opcode::kGetKQ ? batch.answered_reads : batch.answered_mutations);
      (timed_ ? stats_.statuses : stats_.preload_statuses).add(status);
      pos += total;
      continue;
    }
    in_flight_[opaque] = 0;
    --outstanding_;
    if (quiet_) finishQuietBatch(quiet_batches_[opaque], timed_);
    if (timed_) {
      const auto latency_ns = static_cast<uint64_t>(now_ns - sent_ns_[opaque]);
      stats_.latency.record(latency_ns);
      if (slow_log_ns > 0 && latency_ns >= slow_log_ns && stats_.slow.size() < kSlowLogCap) {
        stats_.slow.push_back(
            {.answered_unix_s =
                 std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                     .count(),
             .latency_us = static_cast<double>(latency_ns) / 1000});
      }
      if (!quiet_) {
        stats_.statuses.add(status);
        ++stats_.ops;
      }
    } else if (!quiet_) {
      stats_.preload_statuses.add(status);
    }
    fill(opaque);
    pos += total;
  }
  if (pos > 0) {
    std::memmove(in_.data(), in_.data() + pos, in_size_ - pos);
    in_size_ -= pos;
  }
  return absl::OkStatus();
}

}  // namespace syncwrite::bench::mcbp_load
