#include "server/turn_queue.h"

#include <utility>

namespace syncwrite::server {

TurnQueue::TurnQueue(size_t concurrent) : concurrent_(concurrent < 1 ? 1 : concurrent) {}

void TurnQueue::push(std::shared_ptr<Client> client) {
  {
    base::MutexLock lock(mutex_);
    if (running_ >= concurrent_) {
      waiting_.push_back(std::move(client));
      return;
    }
    ++running_;
  }
  client->startTurn();
}

void TurnQueue::finished() {
  std::shared_ptr<Client> next;
  {
    base::MutexLock lock(mutex_);
    if (waiting_.empty()) {
      --running_;
      return;
    }
    next = std::move(waiting_.front());
    waiting_.pop_front();
  }
  next->startTurn();  // takes the finished turn's place: running_ stays
}

void TurnQueue::clear() {
  std::deque<std::shared_ptr<Client>> dropped;
  {
    base::MutexLock lock(mutex_);
    dropped.swap(waiting_);
    running_ = 0;
  }
}  // `dropped` goes here, outside the mutex: a connection's last owner may be in it

size_t TurnQueue::waiting() const {
  base::MutexLock lock(mutex_);
  return waiting_.size();
}

size_t TurnQueue::running() const {
  base::MutexLock lock(mutex_);
  return running_;
}

}  // namespace syncwrite::server
