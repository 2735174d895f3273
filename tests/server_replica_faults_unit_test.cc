// SimulatedReplica's faults on a real io_context (acks in order under jitter,
// pause holds and resume releases, a shorter delay releases what was held,
// many due acks sent in turns, a turn's resolved writes notified after its
// last ack),
// and the parsing of the fault keys (server/replica_faults.h). Waiting is for
// events, with a hang guard; nothing asserts how long anything took.
#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "server/replica_faults.h"
#include "server/simulated_replica.h"

namespace syncwrite::server {
namespace {

using namespace std::chrono_literals;

// Runs an io_context on a thread and records every ack.
class ReplicaHarness {
 public:
  ReplicaHarness(std::chrono::milliseconds delay, std::chrono::milliseconds jitter)
      : replica_("replica1", delay, jitter, io_,
                 [this](vbucket::Vbid vb, const std::string&, vbucket::Seqno seqno,
                        durability::ResolvedWrites&) {
                   std::lock_guard lock(mutex_);
                   acks_[vb].push_back(seqno);
                 }),
        thread_([this] { io_.run(); }) {}
  ~ReplicaHarness() {
    replica_.stop();
    guard_.reset();
    thread_.join();
  }
  SimulatedReplica& replica() { return replica_; }
  // The highest seqno acked for `vb` (0 when none).
  vbucket::Seqno acked(vbucket::Vbid vb) {
    std::lock_guard lock(mutex_);
    return acks_[vb].empty() ? 0 : acks_[vb].back();
  }
  std::vector<vbucket::Seqno> acks(vbucket::Vbid vb) {
    std::lock_guard lock(mutex_);
    return acks_[vb];
  }
  bool waitForAck(vbucket::Vbid vb, vbucket::Seqno seqno) {
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (acked(vb) < seqno) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }
  size_t pending() {
    std::promise<size_t> count;
    replica_.countPending([&count](size_t n) { count.set_value(n); });
    return count.get_future().get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_{
      io_.get_executor()};
  std::mutex mutex_;
  std::map<vbucket::Vbid, std::vector<vbucket::Seqno>> acks_;
  SimulatedReplica replica_;
  std::thread thread_;
};

void expectIncreasing(const std::vector<vbucket::Seqno>& acks) {
  for (size_t i = 1; i < acks.size(); ++i) {
    ASSERT_LT(acks[i - 1], acks[i]) << "ack " << i << " reordered";
  }
}

TEST(SimulatedReplicaFaults, JitterNeverReordersOneReplicasAcks) {
  ReplicaHarness h(0ms, 5ms);
  for (vbucket::Seqno s = 1; s <= 300; ++s)
    h.replica().onPrepare(static_cast<vbucket::Vbid>(s % 2), s);
  ASSERT_TRUE(h.waitForAck(0, 300));
  ASSERT_TRUE(h.waitForAck(1, 299));
  expectIncreasing(h.acks(0));
  expectIncreasing(h.acks(1));
}

TEST(SimulatedReplicaFaults, APausedReplicaHoldsItsAcksAndResumedAcksThemInOrder) {
  ReplicaHarness h(0ms, 0ms);
  h.replica().setPaused(true);
  for (vbucket::Seqno s = 1; s <= 5; ++s) h.replica().onPrepare(0, s);
  EXPECT_EQ(h.pending(), 5u) << "all held";
  EXPECT_EQ(h.acked(0), 0u);
  h.replica().setPaused(false);
  ASSERT_TRUE(h.waitForAck(0, 5));
  expectIncreasing(h.acks(0));
  EXPECT_EQ(h.pending(), 0u);
}

TEST(SimulatedReplicaFaults, AShorterDelayReleasesTheAcksHeld) {
  ReplicaHarness h(60000ms, 0ms);
  h.replica().onPrepare(0, 1);
  h.replica().onPrepare(0, 2);
  EXPECT_EQ(h.pending(), 2u);
  h.replica().setAckDelay(0ms);
  ASSERT_TRUE(h.waitForAck(0, 2));
  EXPECT_EQ(h.replica().ackDelay(), 0ms);
}

// A resumed replica acks `vbuckets` vbuckets at once; each ack sleeps 1 ms
// and resolves `writes_per_ack` (no-op) writes. Returns how many acks ran
// before a handler posted during the first one, after checking that every ack
// ran once, in vbucket order.
size_t acksBeforeAHandlerPostedDuringTheFirst(int vbuckets, size_t writes_per_ack) {
  constexpr int kMarker = -1;
  boost::asio::io_context io;  // run on this thread only
  std::vector<int> order;
  SimulatedReplica replica("replica1", 0ms, 0ms, io,
                           [&](vbucket::Vbid vb, const std::string&, vbucket::Seqno,
                               durability::ResolvedWrites& resolved) {
                             if (order.empty()) {
                               boost::asio::post(io, [&] { order.push_back(kMarker); });
                             }
                             order.push_back(vb);
                             for (size_t i = 0; i < writes_per_ack; ++i) {
                               resolved.add([](const durability::Resolution&) {},
                                            durability::Resolution{});
                             }
                             std::this_thread::sleep_for(1ms);
                           });
  replica.setPaused(true);
  for (int vb = 0; vb < vbuckets; ++vb) replica.onPrepare(static_cast<vbucket::Vbid>(vb), 1);
  replica.setPaused(false);
  io.run();  // until every ack is sent: nothing else is left to run
  EXPECT_EQ(order.size(), static_cast<size_t>(vbuckets) + 1);
  const auto marker = std::find(order.begin(), order.end(), kMarker);
  const auto before = static_cast<size_t>(marker - order.begin());
  if (marker != order.end()) order.erase(marker);
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int>(i));
  replica.stop();
  io.restart();
  io.run();
  return before;
}

// Each ack may commit a long prefix on the I/O thread: once the acks since
// the turn's last clock read resolved kAcksPerClockRead writes, the clock is
// read, and a turn past kAckSlice (2 ms: at most two of these acks, which
// sleep 1 ms or more each) ends. The handler posted during the first ack runs
// after the first or the second.
TEST(SimulatedReplicaFaults, ManyDueAcksAreSentInTurnsThatLetOtherHandlersRun) {
  EXPECT_LE(acksBeforeAHandlerPostedDuringTheFirst(20, SimulatedReplica::kAcksPerClockRead), 2u);
}

// Acks that resolve little are clocked every kAcksPerClockRead: the turn,
// past kAckSlice long before, ends there.
TEST(SimulatedReplicaFaults, AcksThatResolveLittleAreClockedEveryKAcksPerClockRead) {
  EXPECT_EQ(acksBeforeAHandlerPostedDuringTheFirst(40, 0), SimulatedReplica::kAcksPerClockRead);
}

// The writes a turn of acks resolves reach their completions after the
// turn's last ack, in one batch: the events are blocks of acks, each followed
// by the completions of exactly those acks, in order. Fewer blocks than acks
// shows the batching (a turn ends early only past kAckSlice, 2 ms, and these
// acks take microseconds); every completion runs by the time the acks are done.
TEST(SimulatedReplicaFaults, ATurnOfAcksNotifiesTheWritesItResolvedAfterItsLastAck) {
  constexpr int kVbuckets = 50;
  boost::asio::io_context io;                // run on this thread only
  std::vector<std::pair<char, int>> events;  // ('a', vb): acked; ('d', vb): completion
  SimulatedReplica replica(
      "replica1", 0ms, 0ms, io,
      [&](vbucket::Vbid vb, const std::string&, vbucket::Seqno,
          durability::ResolvedWrites& resolved) {
        events.emplace_back('a', vb);
        auto* log = &events;
        resolved.add([log, vb](const durability::Resolution&) { log->emplace_back('d', vb); },
                     durability::Resolution{});
      });
  replica.setPaused(true);
  for (int vb = 0; vb < kVbuckets; ++vb) replica.onPrepare(static_cast<vbucket::Vbid>(vb), 1);
  replica.setPaused(false);
  io.run();
  ASSERT_EQ(events.size(), 2 * static_cast<size_t>(kVbuckets));
  size_t blocks = 0;
  int next_ack = 0;
  for (size_t i = 0; i < events.size();) {
    std::vector<int> acked;
    for (; i < events.size() && events[i].first == 'a'; ++i) {
      EXPECT_EQ(events[i].second, next_ack++) << "acks in vbucket order";
      acked.push_back(events[i].second);
    }
    ASSERT_FALSE(acked.empty()) << "a completion before any ack of its turn, at event " << i;
    for (int vb : acked) {
      ASSERT_LT(i, events.size()) << "vb " << vb << "'s completion never ran";
      EXPECT_EQ(events[i], std::make_pair('d', vb)) << "event " << i;
      ++i;
    }
    ++blocks;
  }
  EXPECT_LT(blocks, size_t{kVbuckets}) << "each ack notified on its own";
  replica.stop();
  io.restart();
  io.run();
}

TEST(ReplicaFaultKeys, ParseEveryFormAndNameWhatIsWrong) {
  const std::vector<std::string> names = {"replica1", "replica2"};
  auto all = parsePerReplicaMillis("k", "50", names);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at("replica2"), 50ms);
  auto some = parsePerReplicaMillis("k", " replica2=7 ", names);
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->size(), 1u);
  EXPECT_EQ(some->at("replica2"), 7ms);
  EXPECT_TRUE(parsePerReplicaMillis("k", "", names)->empty());
  for (const char* bad : {"x", "60001", "replica3=1", "replica1=", "replica1=-1"}) {
    auto r = parsePerReplicaMillis("k", bad, names);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status();
  }
  EXPECT_EQ(parsePausedReplicas("*", names)->size(), 2u);
  EXPECT_EQ(parsePausedReplicas("replica2", names)->count("replica2"), 1u);
  EXPECT_TRUE(parsePausedReplicas("", names)->empty());
  EXPECT_FALSE(parsePausedReplicas("replica1,nobody", names).ok());
}

}  // namespace
}  // namespace syncwrite::server
