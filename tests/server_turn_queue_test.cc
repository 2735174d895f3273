// TurnQueue (server/turn_queue.h): at most `concurrent` turns started at a
// time, the rest started in the order they were pushed, a turn re-queued by
// its own client goes behind the others, clear() lets go of what waits; and
// the bound holds with pushes and finishes racing on several threads (run
// under TSan by the tsan preset). Nothing asserts a duration.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/turn_queue.h"

namespace syncwrite::server {
namespace {

// Records the order in which the queue starts turns.
class RecordingClient final : public TurnQueue::Client {
 public:
  RecordingClient(std::string name, std::vector<std::string>& started)
      : name_(std::move(name)), started_(started) {}
  void startTurn() override { started_.push_back(name_); }

 private:
  std::string name_;
  std::vector<std::string>& started_;
};

// Clients named "a", "b", ... recording into `started`, each pushed once.
std::vector<std::shared_ptr<RecordingClient>> pushClients(TurnQueue& queue, size_t count,
                                                          std::vector<std::string>& started) {
  std::vector<std::shared_ptr<RecordingClient>> clients;
  for (size_t i = 0; i < count; ++i) {
    clients.push_back(
        std::make_shared<RecordingClient>(std::string(1, static_cast<char>('a' + i)), started));
    queue.push(clients.back());
  }
  return clients;
}

TEST(TurnQueue, StartsAtMostConcurrentTurnsAndTheRestInPushOrder) {
  std::vector<std::string> started;
  TurnQueue queue(2);
  const auto clients = pushClients(queue, 4, started);
  EXPECT_EQ(started, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(queue.running(), 2u);
  EXPECT_EQ(queue.waiting(), 2u);

  queue.finished();  // a's turn (or b's): c takes its place
  EXPECT_EQ(started, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(queue.running(), 2u);
  EXPECT_EQ(queue.waiting(), 1u);

  queue.finished();
  queue.finished();
  EXPECT_EQ(started, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(queue.running(), 1u);
  queue.finished();
  EXPECT_EQ(queue.running(), 0u);
  EXPECT_EQ(queue.waiting(), 0u);

  queue.push(clients[0]);  // room again: started at once
  EXPECT_EQ(started.back(), "a");
  EXPECT_EQ(queue.running(), 1u);
}

// A busy connection queues its next turn from inside its turn, before the
// turn reports finished: it goes behind the connections already waiting.
TEST(TurnQueue, AClientThatQueuesItselfAgainGoesBehindTheOthers) {
  std::vector<std::string> started;
  TurnQueue queue(1);
  const auto clients = pushClients(queue, 3, started);
  for (int round = 0; round < 2; ++round) {
    for (const auto& client : clients) {
      queue.push(client);  // its turn had more to do
      queue.finished();
    }
  }
  EXPECT_EQ(started, (std::vector<std::string>{"a", "b", "c", "a", "b", "c", "a"}));
}

TEST(TurnQueue, ClearLetsGoOfTheWaitingClients) {
  std::vector<std::string> started;
  TurnQueue queue(1);
  const auto clients = pushClients(queue, 2, started);
  EXPECT_EQ(clients[1].use_count(), 2);  // the queue holds b
  queue.clear();
  EXPECT_EQ(clients[1].use_count(), 1);
  EXPECT_EQ(queue.waiting(), 0u);
  EXPECT_EQ(queue.running(), 0u);
  EXPECT_EQ(started, (std::vector<std::string>{"a"}));
}

// Threads standing in for I/O threads: a started turn is handed to them
// (as a post would), they run it — re-queueing the client until it has had
// kTurnsEach turns — and report it finished. No more than `concurrent` turns
// are ever between start and finish, and every turn runs exactly once.
class Worklist {
 public:
  void add(TurnQueue::Client* client) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(client);
    }
    changed_.notify_one();
  }
  // Null once stop() was called and nothing is left.
  TurnQueue::Client* take() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !items_.empty() || stopped_; });
    if (items_.empty()) return nullptr;
    TurnQueue::Client* client = items_.front();
    items_.pop_front();
    return client;
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<TurnQueue::Client*> items_;
  bool stopped_ = false;
};

class BusyClient final : public TurnQueue::Client, public std::enable_shared_from_this<BusyClient> {
 public:
  static constexpr int kTurnsEach = 200;
  BusyClient(Worklist& work, std::atomic<int>& in_turn, std::atomic<int>& most_in_turn)
      : work_(work), in_turn_(in_turn), most_in_turn_(most_in_turn) {}
  void startTurn() override { work_.add(this); }
  // On a worker thread: the turn itself. True if the client wants another.
  bool run() {
    const int now = in_turn_.fetch_add(1) + 1;
    int most = most_in_turn_.load();
    while (now > most && !most_in_turn_.compare_exchange_weak(most, now)) {
    }
    ++turns;  // one turn of a client at a time: the queue holds it once
    in_turn_.fetch_sub(1);
    return turns < kTurnsEach;
  }
  int turns = 0;

 private:
  Worklist& work_;
  std::atomic<int>& in_turn_;
  std::atomic<int>& most_in_turn_;
};

TEST(TurnQueue, RacingPushesAndFinishesNeverRunMoreThanConcurrentTurns) {
  constexpr size_t kConcurrent = 2;
  constexpr int kClients = 16;
  constexpr int kWorkers = 4;
  TurnQueue queue(kConcurrent);
  Worklist work;
  std::atomic<int> in_turn{0};
  std::atomic<int> most_in_turn{0};
  std::atomic<int> done{0};
  std::vector<std::shared_ptr<BusyClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_shared<BusyClient>(work, in_turn, most_in_turn));
  }
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (TurnQueue::Client* item = work.take()) {
        auto* client = static_cast<BusyClient*>(item);
        if (client->run()) {
          queue.push(client->shared_from_this());
        } else {
          done.fetch_add(1);
        }
        queue.finished();
        if (done.load() == kClients) work.stop();
      }
    });
  }
  for (const auto& client : clients) queue.push(client);
  for (std::thread& worker : workers) worker.join();

  EXPECT_LE(most_in_turn.load(), static_cast<int>(kConcurrent));
  EXPECT_EQ(queue.running(), 0u);
  EXPECT_EQ(queue.waiting(), 0u);
  for (const auto& client : clients) EXPECT_EQ(client->turns, BusyClient::kTurnsEach);
}

}  // namespace
}  // namespace syncwrite::server
