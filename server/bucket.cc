#include "server/bucket.h"

#include <utility>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "clock/clock_ref.h"
#include "clock/coarse_clock.h"
#include "clock/precise_clock.h"
#include "server/log.h"

namespace syncwrite::server {

absl::StatusOr<std::unique_ptr<Bucket>> Bucket::create(BucketSpec spec,
                                                       const std::string& node_name,
                                                       executor::ExecutorPool& pool,
                                                       boost::asio::io_context& io) {
  auto topology = durability::ReplicationTopology::create(
      {durability::ReplicationChain{node_name, spec.replicas}});
  if (!topology.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buckets.", spec.name, ": ", topology.status().message()));
  }
  std::vector<SimulatedReplicaSpec> simulated = std::move(spec.simulated);
  std::unique_ptr<Bucket> bucket(new Bucket(std::move(spec), pool, std::move(*topology)));

  Bucket* self = bucket.get();
  std::vector<std::string> simulated_names;
  for (const SimulatedReplicaSpec& replica : simulated) {
    bucket->replicas_.push_back(std::make_unique<SimulatedReplica>(
        replica.name, replica.ack_delay, io,
        [self](vbucket::Vbid vbid, const std::string& node, vbucket::Seqno seqno) {
          self->durability_->seqnoAcknowledged(vbid, node, seqno);
        }));
    simulated_names.push_back(absl::StrCat(replica.name, " (", replica.ack_delay.count(), " ms)"));
  }

  const std::string& name = bucket->name_;
  bucket->mode_listener_ = bucket->config_->addListener(
      config::keys::kDurabilityTimeoutMode, [name](config::DurabilityTimeoutMode mode) {
        logLine(absl::StrCat("bucket \"", name, "\": durability_timeout_mode switched to ",
                             std::string(config::spellingOf(mode))));
      });

  std::vector<std::string> chain{node_name};
  const durability::ReplicationTopology topology_now = bucket->durability_->topology();
  for (const std::string& node : topology_now.chains().front().replicas) chain.push_back(node);
  logLine(absl::StrCat(
      "bucket \"", name, "\" created: ", bucket->vbuckets_.size(),
      " active vbuckets, durability_timeout_mode ",
      std::string(config::spellingOf(bucket->config_->get(config::keys::kDurabilityTimeoutMode))),
      ", chain [", absl::StrJoin(chain, ", "), "], simulated replicas: ",
      simulated_names.empty() ? "none" : absl::StrJoin(simulated_names, ", ")));
  return bucket;
}

Bucket::Bucket(BucketSpec spec, executor::ExecutorPool& pool,
               durability::ReplicationTopology topology)
    : name_(std::move(spec.name)),
      config_(std::move(spec.config)),
      vbuckets_(*config_, vbucket::VBucketState::kActive),
      durability_(std::make_unique<durability::BucketDurability>(
          name_, *config_, vbuckets_, pool, std::move(topology),
          // Deadlines on the precise clock, polling checks on the coarse one
          // (bucket_durability.h, "Time").
          durability::TimeoutClocks{clock::ClockRef::of<clock::PreciseClock>(),
                                    clock::ClockRef::of<clock::CoarseClock>()})) {}

Bucket::~Bucket() {
  if (mode_listener_ != 0) config_->removeListener(mode_listener_);
  // Members go in reverse order: the replicas (stopped by shutdown()), then
  // the durability layer (which stops its tasks), then the vbuckets and config.
}

durability::WriteResult Bucket::write(vbucket::Vbid vbid, durability::WriteRequest request,
                                      durability::Completion completion) {
  durability::WriteResult result =
      durability_->write(vbid, std::move(request), std::move(completion));
  if (result.status == durability::WriteStatus::kPending) {
    // Nothing is kept on disk: the prepare counts as persisted once queued.
    durability_->notifyLocalPersistence(vbid, result.seqno);
    for (const auto& replica : replicas_) replica->onPrepare(vbid, result.seqno);
  }
  return result;
}

void Bucket::shutdown(durability::AmbiguousReason reason) {
  durability_->shutdown(reason);
  for (const auto& replica : replicas_) replica->stop();
}

}  // namespace syncwrite::server
