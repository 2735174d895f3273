#include "executor/timer_thread.h"

#include <pthread.h>

#include <future>

#include <boost/asio/post.hpp>

namespace syncwrite::executor {

TimerThread::TimerThread(ReadyQueue& ready, const char* name)
    : ready_(ready), work_(boost::asio::make_work_guard(io_)) {
  thread_ = std::thread([this, name] {
    pthread_setname_np(pthread_self(), name);
    io_.run();
  });
}

TimerThread::~TimerThread() { stop(); }

void TimerThread::stop() {
  if (!thread_.joinable()) return;
  work_.reset();
  io_.stop();
  thread_.join();
}

void TimerThread::requestSettle(const RecordPtr& rec) {
  if (rec->settle_pending.exchange(true, std::memory_order_seq_cst)) return;
  boost::asio::post(io_, [this, rec] {
    // Cleared before settle() reads the wake time: a snooze that finds the
    // flag still set is seen by the read below (task_record.h).
    rec->settle_pending.store(false, std::memory_order_seq_cst);
    settle(rec);
  });
}

void TimerThread::settleAndWait(RecordPtr rec) {
  std::promise<void> done;
  std::future<void> settled = done.get_future();
  boost::asio::post(io_, [this, &rec, &done] {
    settle(rec);
    done.set_value();
  });
  settled.wait();
}

void TimerThread::release(std::vector<RecordPtr> recs, bool wait) {
  if (recs.empty()) return;
  auto cancel_all = [recs = std::move(recs)] {
    for (const RecordPtr& rec : recs) cancelTimer(*rec);
  };
  if (!wait) {
    boost::asio::post(io_, std::move(cancel_all));
    return;
  }
  std::promise<void> done;
  std::future<void> released = done.get_future();
  boost::asio::post(io_, [this, &cancel_all, &done] {
    cancel_all();
    // The cancelled waits complete (and drop their references) in handlers
    // queued behind this one; report back only after them.
    boost::asio::post(io_, [&done] { done.set_value(); });
  });
  released.wait();
}

void TimerThread::settle(const RecordPtr& rec) {
  for (;;) {
    const RecordState state = rec->state.load(std::memory_order_seq_cst);
    if (state == RecordState::kDead) {
      cancelTimer(*rec);
      return;
    }
    // Queued or running: the worker settles the task after its run.
    if (state != RecordState::kWaiting) return;

    const TimeRep now = nowRep();
    const TimeRep wake = rec->wakeTime().load(std::memory_order_seq_cst);
    if (wake <= now) {
      if (ready_.enqueueIfWaiting(rec) && rec->timer_pending.load()) cancelTimer(*rec);
      return;
    }
    TimeRep at;
    if (wake == kNeverRep) {
      at = kNeverRep;
    } else if (wake == rec->armed_for || wake - now < kEarlyArmMin.count()) {
      at = wake;
    } else {
      at = now + (wake - now) / kEarlyArmDivisor;
    }
    rec->armed.store(at, std::memory_order_seq_cst);
    // A snooze to before `at` that read the previous `armed` did not post:
    // pick its wake time up here.
    if (rec->wakeTime().load(std::memory_order_seq_cst) < at) continue;
    if (at == kNeverRep) {
      if (rec->timer_pending.load()) cancelTimer(*rec);
    } else {
      rec->armed_for = wake;
      arm(rec, at);
    }
    return;
  }
}

void TimerThread::arm(const RecordPtr& rec, TimeRep at) {
  if (!rec->timer) rec->timer.emplace(io_);
  rec->timer->expires_at(clock::TimePoint(clock::Duration(at)));
  const uint64_t generation = ++rec->arm_generation;
  rec->timer_pending.store(true);
  rec->timer->async_wait([this, rec, generation](const boost::system::error_code&) {
    // Re-armed or cancelled since (an expiry can be queued before the
    // cancel that meant to stop it): a newer callback owns the timer.
    if (generation != rec->arm_generation) return;
    rec->timer_pending.store(false);
    settle(rec);
  });
}

void TimerThread::cancelTimer(TaskRecord& rec) {
  ++rec.arm_generation;
  if (rec.timer) rec.timer->cancel();
  rec.timer_pending.store(false);
}

}  // namespace syncwrite::executor
