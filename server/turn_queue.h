// TurnQueue: where a pipelining connection's next turn waits, so that the
// requests of a few hundred busy connections do not queue ahead of a light
// one's.
//
// A connection executes at most Connection::kRequestsPerTurn requests per
// turn. Before this queue, a turn that stopped with more buffered was posted
// straight to the io_context, behind the handlers queued meanwhile: fair
// among connections, but with 300 connections pipelining durable SETs, a
// bystander's read completion queued behind one turn of each (300 × 20
// requests). Here such a continuation waits in a FIFO instead, and at most
// `concurrent` of them are posted at a time (the server keeps one queue per
// I/O thread, for the connections that thread serves, and passes 2). A
// connection's first turn after a read is posted as before; so are late
// answers, writes and timers. A light connection's handler then waits
// behind at most `concurrent` continuation turns, not one per busy
// connection; the busy connections still take their turns in arrival
// order. Measured in docs/benchmarks.md ("TurnQueue").
//
// Threading: push() and finished() may run on any thread; the queue's state
// is under its mutex, and Client::startTurn() is called outside it.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>

#include "base/mutex.h"

namespace syncwrite::server {

class TurnQueue {
 public:
  // What waits in the queue: a connection with a turn to take.
  class Client {
   public:
    // Posts the turn (to the connection's I/O thread); the turn calls
    // TurnQueue::finished() once when it has run. Called at most once per
    // push(), outside the queue's mutex.
    virtual void startTurn() = 0;

   protected:
    ~Client() = default;
  };

  // At most `concurrent` (>= 1) turns started and not yet finished.
  explicit TurnQueue(size_t concurrent);
  TurnQueue(const TurnQueue&) = delete;
  TurnQueue& operator=(const TurnQueue&) = delete;

  // `client` has a turn to take: started now if fewer than `concurrent` are
  // running, otherwise after the ones queued before it.
  void push(std::shared_ptr<Client> client);

  // A started turn has run: starts the next queued one, if any.
  void finished();

  // Drops the queued turns without starting them (at shutdown, once the I/O
  // threads have stopped: nothing would run them).
  void clear();

  // Turns queued and not yet started (for stats and tests).
  size_t waiting() const;
  // Turns started and not yet finished.
  size_t running() const;

 private:
  const size_t concurrent_;
  mutable base::Mutex mutex_;
  std::deque<std::shared_ptr<Client>> waiting_ ABSL_GUARDED_BY(mutex_);
  size_t running_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace syncwrite::server
