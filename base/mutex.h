// Mutexes the compiler can check.
//
// std::mutex from libstdc++ carries no thread-safety attributes, so clang's
// -Wthread-safety cannot tell which member a mutex guards. These are the same
// std mutexes behind a thin annotated face, with no other cost: the same size,
// the same lock word, inline calls. Members name their mutex with
// ABSL_GUARDED_BY (absl/base/thread_annotations.h), functions that expect it
// held with ABSL_EXCLUSIVE_LOCKS_REQUIRED, and lock order rules with
// ABSL_ACQUIRED_BEFORE; the `clang` preset turns every breach into an error.
//
//   base::Mutex mu_;
//   int count_ ABSL_GUARDED_BY(mu_);
//   void bump() { base::MutexLock lock(mu_); ++count_; }
//
// Waiting on a condition variable goes through the scoped lock (MutexLock::
// wait), which lends the held std::mutex to the condition variable. Its
// predicate runs with the mutex held, but it is a separate function to the
// analysis, so a predicate that reads guarded members starts with
// `mu_.assertHeld();`.
#pragma once

#include <absl/base/thread_annotations.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

namespace syncwrite::base {

// std::mutex, annotated. Not recursive; lock() of a mutex the caller holds is
// undefined, as for std::mutex.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  bool try_lock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }

  // Tells the analysis that the caller holds this mutex (where it cannot see
  // it, as in a condition variable's predicate). Checks nothing at run time.
  void assertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};
// Layouts that count cache lines (vbucket/checkpoint_manager.cc) rely on this.
static_assert(sizeof(Mutex) == sizeof(std::mutex));

// Holds a Mutex for its scope, like std::lock_guard; can also wait on a
// condition variable, releasing the mutex while it waits.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Blocks until `done()` returns true, as std::condition_variable::wait with
  // a predicate: the mutex is released while blocked and held again (and
  // while `done` runs) when it returns.
  template <class Predicate>
  void wait(std::condition_variable& cv, Predicate done) {
    std::unique_lock<std::mutex> lock(mu_.mu_, std::adopt_lock);
    cv.wait(lock, std::move(done));
    lock.release();  // still held; this scope's destructor unlocks it
  }

  // As wait(), giving up after `timeout`; returns what `done()` last returned.
  template <class Rep, class Period, class Predicate>
  bool waitFor(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout,
               Predicate done) {
    std::unique_lock<std::mutex> lock(mu_.mu_, std::adopt_lock);
    const bool result = cv.wait_for(lock, timeout, std::move(done));
    lock.release();
    return result;
  }

 private:
  Mutex& mu_;
};

// std::shared_mutex, annotated: many readers (ReaderMutexLock) or one writer
// (WriterMutexLock).
class ABSL_LOCKABLE SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void lock_shared() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void unlock_shared() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a SharedMutex exclusively for its scope.
class ABSL_SCOPED_LOCKABLE WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_.lock();
  }
  ~WriterMutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex shared for its scope.
class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ABSL_SHARED_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_.lock_shared();
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// std::recursive_mutex, annotated. The analysis treats it as a plain mutex: it
// reports a second acquisition it can see in one function, which is the one
// use a recursive mutex here must not make anyway.
class ABSL_LOCKABLE RecursiveMutex {
 public:
  RecursiveMutex() = default;
  RecursiveMutex(const RecursiveMutex&) = delete;
  RecursiveMutex& operator=(const RecursiveMutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::recursive_mutex mu_;
};

// Holds a RecursiveMutex for its scope.
class ABSL_SCOPED_LOCKABLE RecursiveMutexLock {
 public:
  explicit RecursiveMutexLock(RecursiveMutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_.lock();
  }
  ~RecursiveMutexLock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  RecursiveMutexLock(const RecursiveMutexLock&) = delete;
  RecursiveMutexLock& operator=(const RecursiveMutexLock&) = delete;

 private:
  RecursiveMutex& mu_;
};

}  // namespace syncwrite::base
