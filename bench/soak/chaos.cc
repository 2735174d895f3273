#include "bench/soak/chaos.h"

#include <thread>

#include <absl/strings/str_cat.h>

namespace syncwrite::bench::soak {

using server::protocol::Status;
using server::protocol::VbucketState;

Chaos::Chaos(uint16_t port, int vbuckets, std::vector<Worker*> workers, DcpReplica& replica2,
             uint64_t seed, Anomalies& anomalies)
    : port_(port),
      vbuckets_(vbuckets),
      workers_(std::move(workers)),
      replica2_(replica2),
      anomalies_(anomalies),
      random_(seed) {}

bool Chaos::setParam(const std::string& key, const std::string& value) {
  auto answer = admin_->setParam(key, value);
  if (!answer.ok() || answer->status != Status::kSuccess) {
    anomalies_.add(absl::StrCat(
        "chaos: SET_PARAM ", key, "=", value, " failed: ",
        answer.ok() ? answer->errorContext() : std::string(answer.status().message())));
    return false;
  }
  return true;
}

bool Chaos::setActive(uint16_t vbucket, bool active) {
  auto answer =
      admin_->setVbucketState(vbucket, active ? VbucketState::kActive : VbucketState::kReplica);
  if (!answer.ok() || answer->status != Status::kSuccess) {
    anomalies_.add(absl::StrCat(
        "chaos: SET_VBUCKET ", vbucket, active ? " active" : " replica", " failed: ",
        answer.ok() ? answer->errorContext() : std::string(answer.status().message())));
    return false;
  }
  return true;
}

void Chaos::junk() {
  auto spare =
      server::protocol::Client::connect("127.0.0.1", port_, {.timeout = std::chrono::seconds(10)});
  if (!spare.ok()) {
    anomalies_.add(
        absl::StrCat("chaos: the junk connection could not connect: ", spare.status().message()));
    return;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(1, 200);
  std::string bytes(static_cast<size_t>(length(random_)), '\0');
  for (char& c : bytes) c = static_cast<char>(byte(random_));
  // Half the time a valid magic, so that the junk reaches the parser.
  if (byte(random_) < 128) bytes[0] = static_cast<char>(0x80);
  (void)spare->sendRaw(bytes);
  spare->close();
}

void Chaos::run(const std::atomic<bool>& stop) {
  auto admin =
      server::protocol::Client::connectToBucket("127.0.0.1", port_, "default", "soak-chaos");
  if (!admin.ok()) {
    anomalies_.add(absl::StrCat("chaos: cannot connect: ", admin.status().message()));
    return;
  }
  admin_.emplace(std::move(*admin));
  std::uniform_int_distribution<int> action_of(0, 9);
  std::uniform_int_distribution<int> pause_ms(20, 200);
  std::uniform_int_distribution<int> interval_of(5, 100);
  std::uniform_int_distribution<int> vbucket_of(0, vbuckets_ - 1);
  std::uniform_int_distribution<size_t> worker_of(0, workers_.size() - 1);
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(random_)));
    const auto now = std::chrono::steady_clock::now();
    if (paused_since_ && now - *paused_since_ > std::chrono::milliseconds(800)) {
      if (setParam("simulated_replicas_paused", "")) ++counts_["replica_resumed"];
      paused_since_.reset();
    }
    if (replica2_paused_since_ && now - *replica2_paused_since_ > std::chrono::milliseconds(800)) {
      replica2_.setPaused(false);
      ++counts_["replica2_resumed"];
      replica2_paused_since_.reset();
    }
    if (stalled_since_ && now - *stalled_since_ > std::chrono::milliseconds(1000)) {
      if (setParam("flusher_paused", "false")) ++counts_["flusher_resumed"];
      stalled_since_.reset();
    }
    switch (action_of(random_)) {
      case 0:
        if (!paused_since_ && setParam("simulated_replicas_paused", "replica1")) {
          paused_since_ = now;
          ++counts_["replica_paused"];
        }
        break;
      case 1:
        if (!stalled_since_ && setParam("flusher_paused", "true")) {
          stalled_since_ = now;
          ++counts_["flusher_stalled"];
        }
        break;
      case 2:
        if (setParam("durability_timeout_mode", polling_ ? "event-driven" : "polling")) {
          polling_ = !polling_;
          ++counts_["timeout_mode_switched"];
        }
        break;
      case 3:
        if (setParam("durability_timeout_task_interval", absl::StrCat(interval_of(random_)))) {
          ++counts_["timeout_interval_changed"];
        }
        break;
      case 4:
        if (!replica_vbuckets_.empty()) {
          if (setActive(replica_vbuckets_.back(), true)) ++counts_["vbucket_made_active"];
          replica_vbuckets_.pop_back();
        } else {
          const auto vbucket = static_cast<uint16_t>(vbucket_of(random_));
          if (setActive(vbucket, false)) {
            replica_vbuckets_.push_back(vbucket);
            ++counts_["vbucket_made_replica"];
          }
        }
        break;
      case 5:
        workers_[worker_of(random_)]->requestDrop();
        ++counts_["connection_dropped"];
        break;
      case 6:
        junk();
        ++counts_["junk_connection"];
        break;
      case 7:
        if (!replica2_paused_since_) {
          replica2_.setPaused(true);
          replica2_paused_since_ = now;
          ++counts_["replica2_paused"];
        }
        break;
      case 8:
        replica2_.requestDrop();
        ++counts_["replica2_connection_dropped"];
        break;
      default:  // a quiet turn
        break;
    }
    if (auto noop = admin_->noop(); !noop.ok()) {
      anomalies_.add(absl::StrCat("chaos: the admin connection failed: ", noop.status().message()));
      return;
    }
  }
}

void Chaos::restore() {
  if (!admin_) return;
  setParam("simulated_replicas_paused", "");
  setParam("flusher_paused", "false");
  replica2_.setPaused(false);
  for (uint16_t vbucket : replica_vbuckets_) setActive(vbucket, true);
  replica_vbuckets_.clear();
  admin_.reset();
}

nlohmann::json Chaos::counts() const {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [kind, n] : counts_) json[kind] = n;
  return json;
}

}  // namespace syncwrite::bench::soak
