#include "bench/soak/dcp_replica.h"

#include <chrono>
#include <thread>

#include <absl/strings/str_cat.h>

namespace syncwrite::bench::soak {

using server::protocol::Client;
using server::protocol::Status;
using server::protocol::VbucketState;

DcpReplica::DcpReplica(uint16_t port, uint64_t seed, Anomalies& anomalies)
    : port_(port), anomalies_(anomalies), random_(seed) {}

bool DcpReplica::connect() {
  auto client = Client::connectToBucket("127.0.0.1", port_, "default", "soak-replica2",
                                        {.timeout = std::chrono::seconds(60)});
  if (!client.ok()) {
    anomalies_.add(absl::StrCat("replica2: cannot connect: ", client.status().message()));
    return false;
  }
  auto opened = client->dcpOpen(kName);
  if (!opened.ok() || opened->status != Status::kSuccess) {
    anomalies_.add(absl::StrCat(
        "replica2: DCP_OPEN failed: ",
        opened.ok() ? opened->errorContext() : std::string(opened.status().message())));
    return false;
  }
  client_.emplace(std::move(*client));
  ++connections_;
  return true;
}

void DcpReplica::checkAnswers() {
  for (const server::protocol::Response& answer : client_->takeStrayResponses()) {
    if (answer.status == Status::kNotMyVbucket) {
      ++not_my_vbucket_;
    } else {
      anomalies_.add(absl::StrCat("replica2: an ack was answered ",
                                  std::string(server::protocol::toString(answer.status)),
                                  " (only NotMyVbucket may answer one)"));
    }
  }
}

void DcpReplica::turn() {
  auto seqnos = client_->allVbSeqnos(static_cast<uint32_t>(VbucketState::kActive));
  if (!seqnos.ok()) {
    anomalies_.add(absl::StrCat("replica2: GET_ALL_VB_SEQNOS failed: ", seqnos.status().message()));
    client_.reset();
    return;
  }
  ++polls_;
  checkAnswers();
  std::bernoulli_distribution half(0.5);
  for (const server::protocol::VbSeqno& entry : *seqnos) {
    if (entry.seqno == 0 || !half(random_)) continue;
    if (!client_->seqnoAck(entry.vbucket, entry.seqno).ok()) {
      anomalies_.add("replica2: sending an ack failed");
      client_.reset();
      return;
    }
    ++acks_;
  }
}

void DcpReplica::run(const std::atomic<bool>& stop) {
  std::uniform_int_distribution<int> pause_ms(2, 50);
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random_)));
    if (drop_.exchange(false)) client_.reset();
    if (paused_.load()) continue;
    if (!client_ && !connect()) return;
    turn();
  }
  if (client_) {
    // The answers of the last acks, if any: a NOOP's answer comes after them.
    if (client_->noop().ok()) checkAnswers();
    client_.reset();
  }
}

nlohmann::json DcpReplica::counts() const {
  return {{"polls", polls_},
          {"acks", acks_},
          {"acks_not_my_vbucket", not_my_vbucket_},
          {"connections", connections_}};
}

}  // namespace syncwrite::bench::soak
