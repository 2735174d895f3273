// What a storage server does to get SyncWrites from syncwrite: one bucket,
// driven by hand in the roles a store's own threads play (see
// docs/embedding.md, "Threads"):
//  - front end: BucketDurability::write(), and the completion that answers
//    the client later;
//  - replication: seqnoAcknowledged() when a replica acks a prepare;
//  - flusher: notifyLocalPersistence() when the prepare is on disk;
//  - configuration: Configuration::set() of a dynamic key, on a live bucket.
// Each step prints its outcome; expected_output.txt is what it prints.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "clock/clock_ref.h"
#include "clock/precise_clock.h"
#include "config/configuration.h"
#include "durability/bucket_durability.h"
#include "durability/requirements.h"
#include "durability/sync_write.h"
#include "durability/topology.h"
#include "executor/executor_pool.h"
#include "vbucket/vbucket_map.h"

namespace sw = syncwrite;
using sw::durability::Level;
using sw::durability::Requirements;
using sw::durability::Resolution;
using sw::durability::Timeout;
using sw::durability::WriteRequest;
using sw::durability::WriteResult;
using sw::durability::WriteStatus;
using Steady = std::chrono::steady_clock;

namespace {

constexpr sw::vbucket::Vbid kVbid = 0;

// What the front end keeps per SyncWrite until its completion is called: in a
// real store, the client connection to answer. Completions come from other
// threads, so the record is guarded by a mutex.
class Outcomes {
 public:
  // The completion for `key`: it records the resolution and when it came.
  sw::durability::Completion completionFor(std::string key) {
    return [this, key = std::move(key)](const Resolution& resolution) {
      const std::lock_guard lock(mutex_);
      resolved_.insert_or_assign(key, Record{resolution, Steady::now()});
      changed_.notify_all();
    };
  }

  // Waits (up to 10 s) for `key`'s completion; prints it and returns when it came.
  Steady::time_point await(const std::string& key) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, std::chrono::seconds(10),
                           [&] { return resolved_.contains(key); })) {
      std::printf("  \"%s\": NO RESOLUTION after 10 s\n", key.c_str());
      return Steady::time_point::max();
    }
    const Record& record = resolved_.at(key);
    const Resolution& r = record.resolution;
    if (r.committed) {
      std::printf("  \"%s\": committed, commit seqno %llu\n", key.c_str(),
                  static_cast<unsigned long long>(r.resolution_seqno));
    } else if (r.resolution_seqno != 0) {
      std::printf("  \"%s\": ambiguous (%s), abort seqno %llu\n", key.c_str(),
                  std::string(toString(r.reason)).c_str(),
                  static_cast<unsigned long long>(r.resolution_seqno));
    } else {  // the vbucket left active or the bucket went away: nothing queued
      std::printf("  \"%s\": ambiguous (%s), no abort queued\n", key.c_str(),
                  std::string(toString(r.reason)).c_str());
    }
    return record.when;
  }

  bool resolved(const std::string& key) {
    const std::lock_guard lock(mutex_);
    return resolved_.contains(key);
  }

 private:
  struct Record {
    Resolution resolution;
    Steady::time_point when;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Record> resolved_;
};

// The request views `key`: it must outlive the write() call (here, literals).
WriteRequest syncWrite(std::string_view key, Level level,
                       Timeout timeout = Timeout::bucketDefault()) {
  WriteRequest request;
  request.key = key;
  request.value = "{\"paid\": true}";
  request.durability = Requirements{level, timeout};
  return request;
}

void printWrite(const std::string& what, const WriteResult& result) {
  std::printf("%s: %s, seqno %llu\n", what.c_str(), std::string(toString(result.status)).c_str(),
              static_cast<unsigned long long>(result.seqno));
}

// Runs `fn` on a thread of its own, as a store's replication or flusher thread
// would call in, and waits for it (so that the output stays in order).
template <typename Fn>
void onThread(Fn fn) {
  std::thread thread(std::move(fn));
  thread.join();
}

}  // namespace

int main() {
  // 1. What the store creates once: the executor pool (timeouts run on it), a
  //    bucket's configuration and its vbuckets. All three outlive the
  //    BucketDurability that uses them: declare them first.
  sw::executor::ExecutorPool pool(2);
  sw::config::Configuration bucket_config(sw::config::Scope::kBucket);
  if (absl::Status s =
          bucket_config.loadString(R"({"max_vbuckets": 4, "bucket_type": "couchbase"})");
      !s.ok()) {
    std::printf("config refused: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  sw::vbucket::VBucketMap vbuckets(bucket_config, sw::vbucket::VBucketState::kActive);

  // 2. The replication chain: this node, then its replicas. A SyncWrite
  //    commits once 2 of these 3 (this node among them) have it.
  auto topology = sw::durability::ReplicationTopology::create(
      {sw::durability::ReplicationChain{"store-a", {"store-b", "store-c"}}});
  if (!topology.ok()) {
    std::printf("topology refused: %s\n", std::string(topology.status().message()).c_str());
    return 1;
  }

  // 3. The bucket's durability layer. Deadlines are stamped from the precise
  //    clock: one that lags real time (coarse) could expire a write early.
  sw::durability::BucketDurability durability("orders", bucket_config, vbuckets, pool,
                                              *std::move(topology),
                                              sw::clock::ClockRef::of<sw::clock::PreciseClock>());
  std::printf("bucket \"orders\": %zu vbuckets, chain [store-a, store-b, store-c], mode %s\n",
              vbuckets.size(), std::string(toString(durability.mode())).c_str());
  Outcomes outcomes;

  // 4. A plain write (no durability): visible at once, no completion.
  WriteRequest plain;
  plain.key = "greeting";
  plain.value = "hello";
  printWrite("plain write \"greeting\"", durability.write(kVbid, plain, nullptr));

  // 5. A SyncWrite at level majority, committed by a replica's ack.
  WriteResult w1 = durability.write(kVbid, syncWrite("order:1", Level::kMajority),
                                    outcomes.completionFor("order:1"));
  printWrite("SyncWrite \"order:1\" (majority)", w1);
  onThread([&] {  // the store's replication: store-b has the prepare
    std::printf("  replication: store-b acks seqno %llu\n",
                static_cast<unsigned long long>(w1.seqno));
    durability.seqnoAcknowledged(kVbid, "store-b", w1.seqno);
  });
  outcomes.await("order:1");

  // 6. Level majority_and_persist_on_master: a replica's ack is not enough,
  //    the active must persist the prepare too.
  WriteResult w2 = durability.write(kVbid, syncWrite("order:2", Level::kMajorityAndPersistOnMaster),
                                    outcomes.completionFor("order:2"));
  printWrite("SyncWrite \"order:2\" (majority_and_persist_on_master)", w2);
  onThread([&] { durability.seqnoAcknowledged(kVbid, "store-c", w2.seqno); });
  std::printf("  replication: store-c acks seqno %llu; resolved: %s\n",
              static_cast<unsigned long long>(w2.seqno),
              outcomes.resolved("order:2") ? "yes" : "no");
  onThread([&] {  // the store's flusher: the prepare is on disk
    std::printf("  flusher: persisted up to seqno %llu\n",
                static_cast<unsigned long long>(w2.seqno));
    durability.notifyLocalPersistence(kVbid, w2.seqno);
  });
  outcomes.await("order:2");

  // 7. A SyncWrite nobody acknowledges, with a 50 ms timeout: aborted by the
  //    event-driven timer, and never before its 50 ms have passed.
  const auto timeout = std::chrono::milliseconds(50);
  const Steady::time_point sent = Steady::now();
  WriteResult w3 = durability.write(
      kVbid, syncWrite("order:3", Level::kMajority, *Timeout::fromMillis(timeout.count())),
      outcomes.completionFor("order:3"));
  printWrite("SyncWrite \"order:3\" (majority, 50 ms, never acked)", w3);
  const Steady::time_point aborted = outcomes.await("order:3");
  std::printf("  aborted after its 50 ms: %s\n", aborted - sent >= timeout ? "yes" : "NO (early)");

  // 8. Switch durability_timeout_mode on the live bucket, with a SyncWrite in
  //    flight: the polling task takes over its deadline, which it neither
  //    misses nor doubles.
  WriteResult w4 =
      durability.write(kVbid, syncWrite("order:4", Level::kMajority, *Timeout::fromMillis(200)),
                       outcomes.completionFor("order:4"));
  printWrite("SyncWrite \"order:4\" (majority, 200 ms, never acked)", w4);
  absl::Status switched = bucket_config.set(sw::config::keys::kDurabilityTimeoutMode,
                                            sw::config::DurabilityTimeoutMode::kPolling);
  std::printf("config: durability_timeout_mode = polling: %s; mode now %s\n",
              switched.ok() ? "ok" : std::string(switched.message()).c_str(),
              std::string(toString(durability.mode())).c_str());
  outcomes.await("order:4");

  // 9. Shut down with a SyncWrite in flight: it is answered ambiguous, and
  //    nothing is accepted afterwards.
  WriteResult w5 = durability.write(kVbid, syncWrite("order:5", Level::kMajority),
                                    outcomes.completionFor("order:5"));
  printWrite("SyncWrite \"order:5\" (majority)", w5);
  durability.shutdown(sw::durability::AmbiguousReason::kShutdown);
  std::printf("shutdown\n");
  outcomes.await("order:5");
  printWrite("SyncWrite \"order:6\" after shutdown",
             durability.write(kVbid, syncWrite("order:6", Level::kMajority),
                              outcomes.completionFor("order:6")));

  const sw::durability::DurabilityStats stats = durability.stats();
  std::printf(
      "stats: committed %llu, aborted_timeout %llu, ambiguous_other %llu, plain_writes %llu, "
      "refused %llu, mode_switches %llu, in_flight %llu\n",
      static_cast<unsigned long long>(stats.committed),
      static_cast<unsigned long long>(stats.aborted_timeout),
      static_cast<unsigned long long>(stats.ambiguous_other),
      static_cast<unsigned long long>(stats.plain_writes),
      static_cast<unsigned long long>(stats.refused),
      static_cast<unsigned long long>(stats.mode_switches),
      static_cast<unsigned long long>(stats.in_flight));
  return 0;
}
