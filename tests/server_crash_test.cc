// Kill -9 loses nothing acknowledged: writers at every durability level
// against a couchbase bucket while the server is killed with SIGKILL at a
// random moment, then restarted on the same data directory and read back.
//
// Every write has a key of its own and a value no other write has, so what
// a key holds after a restart says which write it came from. Checked after
// each restart:
//  - every write answered Success at majority_and_persist_on_master or
//    persist_to_majority is there with its value;
//  - no key holds a value other than its own write's (nothing invented,
//    nothing from another write);
//  - a write that got no answer (in flight at the kill) is there or not,
//    and a second restart does not change which;
//  - warmup put back at most two prepares per writer: its unanswered write
//    and the one before it, whose commit may not have reached the disk.
// Cycles: SYNCWRITE_CRASH_CYCLES (default 3, what CI runs; docs/persistence.md
// gives the command for 20).
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/protocol/client.h"
#include "server/protocol/request_encoder.h"
#include "server/protocol/response.h"
#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Status;
using testing::ServerProcess;

constexpr int kWriters = 4;
constexpr uint16_t kVbuckets = 8;

enum class Outcome { kSuccess, kRefused, kUnanswered };

struct Write {
  std::string key;
  std::string value;
  durability::Level level = durability::Level::kNone;
  Outcome outcome = Outcome::kUnanswered;
};

uint16_t vbucketOf(const std::string& key) {
  return static_cast<uint16_t>(std::hash<std::string>()(key) % kVbuckets);
}

std::string crashConfig(const std::filesystem::path& data_dir) {
  return R"({"data_dir": ")" + data_dir.string() +
         R"(", "buckets": {"default": {"bucket_type": "couchbase", "max_vbuckets": 8,
             "replicas": ["replica1"],
             "simulated_replicas": {"replica1": {"ack_delay_ms": 1}}}}})";
}

int cycles() {
  const char* env = std::getenv("SYNCWRITE_CRASH_CYCLES");
  return env != nullptr ? std::max(1, std::atoi(env)) : 3;
}

class CrashTest : public ::testing::Test {
 protected:
  std::filesystem::path dataDir() const { return server_.portFile().parent_path() / "data"; }

  // Writers until `stop`, each recording its writes in `writes_`.
  void write(int writer, int cycle, const std::atomic<bool>& stop) {
    protocol::Client client = server_.connect();
    static constexpr durability::Level kLevels[] = {
        durability::Level::kNone, durability::Level::kMajority,
        durability::Level::kMajorityAndPersistOnMaster, durability::Level::kPersistToMajority};
    for (int i = 0; !stop.load(); ++i) {
      Write w;
      w.key = "c" + std::to_string(cycle) + "-w" + std::to_string(writer) + "-" + std::to_string(i);
      w.value = "value of " + w.key;
      w.level = kLevels[i % 4];
      protocol::MutationOptions options;
      if (w.level != durability::Level::kNone) {
        options.durability = protocol::DurabilitySpec{w.level, 20000};
      }
      size_t index;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        index = writes_.size();
        writes_.push_back(w);
      }
      auto answer = client.set(vbucketOf(w.key), w.key, w.value, options);
      if (!answer.ok()) return;  // the server died: this write is unanswered
      std::lock_guard<std::mutex> lock(mutex_);
      writes_[index].outcome =
          answer->status == Status::kSuccess ? Outcome::kSuccess : Outcome::kRefused;
    }
  }

  // What each key written so far holds now ("" when absent).
  std::map<std::string, std::string> readBack() {
    protocol::Client client = server_.connect();
    std::map<std::string, std::string> out;
    for (const Write& w : writes_) {
      auto r = client.get(vbucketOf(w.key), w.key);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok()) continue;
      // A re-committing prepare answers 0xa4 until its replica acks: wait.
      for (int tries = 0;
           r.ok() && r->status == Status::kSyncWriteReCommitInProgress && tries < 2000; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        r = client.get(vbucketOf(w.key), w.key);
      }
      EXPECT_TRUE(r->status == Status::kSuccess || r->status == Status::kKeyNotFound)
          << w.key << ": status " << int(r->status);
      out[w.key] = r->status == Status::kSuccess ? std::string(r->value) : "";
    }
    return out;
  }

  void restart(const std::string& config) {
    std::filesystem::remove(server_.portFile());
    ASSERT_TRUE(server_.start(config));
  }

  ServerProcess server_;
  std::mutex mutex_;
  std::vector<Write> writes_;
};

TEST_F(CrashTest, SigkillUnderWritesAtEveryLevelLosesNothingAcknowledged) {
  const std::string config = crashConfig(dataDir());
  std::mt19937 random(std::random_device{}());
  ASSERT_TRUE(server_.start(config));
  std::map<std::string, std::string> unanswered_seen;  // key -> what the first restart found
  for (int cycle = 0; cycle < cycles(); ++cycle) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) writers.emplace_back([&, w] { write(w, cycle, stop); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + random() % 400));
    server_.signal(SIGKILL);
    ASSERT_EQ(server_.wait(), -SIGKILL);
    stop = true;
    for (std::thread& t : writers) t.join();
    ASSERT_NO_FATAL_FAILURE(restart(config));

    size_t in_flight_durable = 0;
    for (const Write& w : writes_) {
      if (w.key.starts_with("c" + std::to_string(cycle) + "-") &&
          w.outcome == Outcome::kUnanswered && w.level != durability::Level::kNone) {
        ++in_flight_durable;
      }
    }
    // The warmup line says "..., N outstanding prepares, ...".
    const std::string err = server_.stderrText();
    const size_t at = err.find(" outstanding prepares");
    ASSERT_NE(at, std::string::npos) << err;
    const size_t digits = err.find_last_not_of("0123456789", at - 1) + 1;
    const std::string prepares_back = err.substr(digits, at - digits);
    ASSERT_FALSE(prepares_back.empty()) << err;
    // Per writer, at most its unanswered write and the one answered just
    // before it: an answer waits for a prepare's persistence at the persist
    // levels, never for its commit's, so that commit may not be on disk yet.
    EXPECT_LE(std::stoul(prepares_back), 2u * kWriters) << err;

    const std::map<std::string, std::string> now = readBack();
    size_t acknowledged = 0;
    for (const Write& w : writes_) {
      const std::string& held = now.at(w.key);
      EXPECT_TRUE(held.empty() || held == w.value) << w.key << " holds \"" << held << "\"";
      const bool persist_level = w.level == durability::Level::kMajorityAndPersistOnMaster ||
                                 w.level == durability::Level::kPersistToMajority;
      if (w.outcome == Outcome::kSuccess && persist_level) {
        ++acknowledged;
        EXPECT_EQ(held, w.value) << "acknowledged at a persist level, lost: " << w.key;
      }
      if (w.outcome == Outcome::kUnanswered) {
        auto [it, first] = unanswered_seen.emplace(w.key, held);
        EXPECT_EQ(it->second, held) << "an unanswered write changed across restarts: " << w.key;
      }
    }
    EXPECT_GT(acknowledged, 0u) << "cycle " << cycle << " acknowledged nothing to check";
    std::cout << "cycle " << cycle << ": " << writes_.size() << " writes so far, " << acknowledged
              << " acknowledged at persist levels (all there), " << in_flight_durable
              << " durable in flight at the kill, " << prepares_back << " prepares back\n";
  }
}

}  // namespace
}  // namespace syncwrite::server
