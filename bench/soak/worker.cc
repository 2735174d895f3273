#include "bench/soak/worker.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include <absl/strings/str_cat.h>

#include "server/protocol/request_encoder.h"

namespace syncwrite::bench::soak {

using server::protocol::Opcode;
using server::protocol::Status;

Worker::Worker(int index, uint16_t port, int keys, int vbuckets, uint64_t seed, Tally& tally,
               Anomalies& anomalies)
    : index_(index),
      port_(port),
      vbuckets_(vbuckets),
      tally_(tally),
      anomalies_(anomalies),
      random_(seed),
      keys_(static_cast<size_t>(keys)) {}

std::string Worker::keyName(int key) const { return absl::StrCat("soak", index_, "_", key); }

uint16_t Worker::vbucketOf(int key) const {
  return static_cast<uint16_t>((index_ * 7919 + key) % vbuckets_);
}

bool Worker::connect() {
  auto client = server::protocol::Client::connectToBucket("127.0.0.1", port_, "default",
                                                          absl::StrCat("soak-worker-", index_));
  if (!client.ok()) {
    anomalies_.add(
        absl::StrCat("worker ", index_, ": cannot connect: ", client.status().message()));
    return false;
  }
  client_.emplace(std::move(*client));
  return true;
}

void Worker::run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    if (!client_ && !connect()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    batch();
  }
  client_.reset();
}

void Worker::batch() {
  std::uniform_int_distribution<int> size_of(1, 12);
  std::uniform_int_distribution<int> key_of(0, static_cast<int>(keys_.size()) - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<int> level_of(1, 3);
  std::uniform_int_distribution<int> timeout_of(20, 1500);
  std::vector<Request> requests;
  const int size = size_of(random_);
  for (int tries = 0; static_cast<int>(requests.size()) < size && tries < 100; ++tries) {
    const int key = key_of(random_);
    if (keys_[key].retired || std::any_of(requests.begin(), requests.end(),
                                          [&](const Request& r) { return r.key == key; })) {
      continue;
    }
    Request request;
    request.key = key;
    const int p = percent(random_);
    request.op = p < 25   ? Op::kGet
                 : p < 50 ? Op::kSet
                 : p < 65 ? Op::kAdd
                 : p < 80 ? Op::kReplace
                          : Op::kDelete;
    if (request.op != Op::kGet) {
      request.durable = percent(random_) < 50;
      if (request.op != Op::kDelete) request.value = absl::StrCat("w", index_, "v", ++written_);
    }
    requests.push_back(std::move(request));
  }
  if (requests.empty()) return;  // every key retired: nothing left to do

  std::string bytes;
  for (Request& r : requests) {
    r.opaque = client_->nextOpaque();
    server::protocol::MutationOptions options;
    if (r.durable) {
      r.timeout_ms = static_cast<uint16_t>(timeout_of(random_));
      options.durability = server::protocol::DurabilitySpec{
          static_cast<durability::Level>(level_of(random_)), r.timeout_ms};
    }
    const std::string key = keyName(r.key);
    switch (r.op) {
      case Op::kGet:
        server::protocol::appendGet(bytes, r.opaque, vbucketOf(r.key), key);
        break;
      case Op::kSet:
      case Op::kAdd:
      case Op::kReplace: {
        const Opcode opcode = r.op == Op::kSet   ? Opcode::kSet
                              : r.op == Op::kAdd ? Opcode::kAdd
                                                 : Opcode::kReplace;
        server::protocol::appendStore(bytes, opcode, r.opaque, vbucketOf(r.key), key, *r.value,
                                      options);
        break;
      }
      case Op::kDelete:
        server::protocol::appendDelete(bytes, r.opaque, vbucketOf(r.key), key, options);
        break;
    }
    if (r.op == Op::kGet) {
      tally_.reads.fetch_add(1, std::memory_order_relaxed);
    } else if (r.durable) {
      tally_.durable_writes.fetch_add(1, std::memory_order_relaxed);
    } else {
      tally_.plain_writes.fetch_add(1, std::memory_order_relaxed);
    }
  }
  tally_.requests.fetch_add(requests.size(), std::memory_order_relaxed);
  const auto sent = std::chrono::steady_clock::now();
  if (auto status = client_->sendRaw(bytes); !status.ok()) {
    anomalies_.add(absl::StrCat("worker ", index_, ": send failed: ", status.message()));
    abandon(requests, 0);
    return;
  }
  if (drop_.exchange(false)) {
    // Closed with every request in flight: half the time gracefully, and
    // always once half the keys are retired, so that the run never runs out
    // of keys.
    const bool graceful = retired_ * 2 >= keys_.size() || percent(random_) < 50;
    if (graceful) {
      dropGracefully(requests);
    } else {
      abandon(requests, 0);
    }
    return;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    auto response = client_->readResponse();
    if (!response.ok()) {
      anomalies_.add(absl::StrCat("worker ", index_, ": ", requests.size() - i,
                                  " request(s) unanswered: ", response.status().message()));
      abandon(requests, i);
      return;
    }
    tally_.answers.fetch_add(1, std::memory_order_relaxed);
    if (response->opaque != requests[i].opaque) {
      anomalies_.add(absl::StrCat("worker ", index_, ": answer with opaque ", response->opaque,
                                  " where the answer to ", requests[i].opaque,
                                  " was due (doubled, lost or out of order)"));
      abandon(requests, i);
      return;
    }
    check(requests[i], *response, std::chrono::steady_clock::now() - sent);
  }
}

void Worker::check(const Request& request, const server::protocol::Response& response,
                   std::chrono::steady_clock::duration waited) {
  KeyModel& model = keys_[request.key];
  const std::string what = absl::StrCat("worker ", index_, ": key ", keyName(request.key), ": ",
                                        request.durable ? "durable " : "", toString(request.op));
  tally_.statuses[static_cast<uint8_t>(response.status)].fetch_add(1, std::memory_order_relaxed);
  const Verdict verdict = judge(request.op, request.durable, response.status);
  if (!verdict.legal) {
    anomalies_.add(absl::StrCat(what, ": illegal status ",
                                std::string(server::protocol::toString(response.status)), " (",
                                response.errorContext(), ")"));
  }
  const Value read = request.op == Op::kGet ? Value(response.value) : std::nullopt;
  if (std::string wrong = checkAnswer(request.op, response.status, read, model); !wrong.empty()) {
    anomalies_.add(absl::StrCat(what, ": ", wrong));
  }
  if (response.status == Status::kSyncWriteAmbiguous && request.durable &&
      waited < std::chrono::milliseconds(request.timeout_ms) &&
      response.errorContext().find("timeout") != std::string::npos) {
    anomalies_.add(
        absl::StrCat(what, ": answered ambiguous (timeout) after ",
                     std::chrono::duration_cast<std::chrono::microseconds>(waited).count(),
                     " us, before its timeout of ", request.timeout_ms, " ms"));
  }
  if (request.durable) {
    auto& counter = verdict.outcome == Outcome::kApplied   ? tally_.durable_committed
                    : verdict.outcome == Outcome::kInDoubt ? tally_.durable_ambiguous
                                                           : tally_.durable_refused;
    counter.fetch_add(1, std::memory_order_relaxed);
  }
  if (request.op != Op::kGet) model.write(request.value, verdict.outcome);
}

void Worker::unanswered(const Request& r) {
  tally_.dropped_unanswered.fetch_add(1, std::memory_order_relaxed);
  if (r.durable) tally_.dropped_durable_unanswered.fetch_add(1, std::memory_order_relaxed);
  if (r.op != Op::kGet) keys_[r.key].write(r.value, Outcome::kInDoubt);
}

void Worker::abandon(const std::vector<Request>& requests, size_t first) {
  for (size_t i = first; i < requests.size(); ++i) {
    const Request& r = requests[i];
    unanswered(r);
    if (!keys_[r.key].retired) ++retired_;
    keys_[r.key].retired = true;
  }
  client_.reset();  // with unread answers: the kernel resets the connection
}

void Worker::dropGracefully(const std::vector<Request>& requests) {
  // The client takes the socket over (client.h: nativeHandle), sends its end
  // of stream and reads until the server closes its end. The server executes
  // nothing of a connection after that (connection.h, "Closing"), so the
  // requests' keys can be used again: what the dropped writes did is in
  // doubt, and any SyncWrite of theirs still pending keeps its key busy.
  const int fd = client_->nativeHandle();
  ::shutdown(fd, SHUT_WR);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buffer[4096];
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() < give_up) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    closed = n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
  }
  if (!closed) {
    anomalies_.add(absl::StrCat("worker ", index_,
                                ": the server kept a half-closed connection open for 60 s"));
  }
  for (const Request& r : requests) unanswered(r);
  client_.reset();
}

void Worker::checkFinal(server::protocol::Client& reader) {
  for (int key = 0; key < static_cast<int>(keys_.size()); ++key) {
    auto got = reader.get(vbucketOf(key), keyName(key));
    if (!got.ok()) {
      anomalies_.add(
          absl::StrCat("final read of ", keyName(key), " failed: ", got.status().message()));
      return;
    }
    const KeyModel& model = keys_[key];
    const bool ok = got->status == Status::kSuccess       ? model.mayHold(got->value)
                    : got->status == Status::kKeyNotFound ? model.mayBeAbsent()
                                                          : false;
    if (!ok) {
      anomalies_.add(absl::StrCat("final read of ", keyName(key), ": ",
                                  std::string(server::protocol::toString(got->status)), " \"",
                                  got->value, "\" but the key can only be ", model.describe()));
    }
  }
}

}  // namespace syncwrite::bench::soak
