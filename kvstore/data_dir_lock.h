// DataDirLock: one process at a time in a bucket's data directory.
//
// Holds an exclusive flock(2) on DIR/syncwrite.lock for its lifetime, the
// file holding the holder's PID. The kernel drops the lock when the process
// dies, however it dies (SIGKILL included), so a crash never leaves a stale
// lock behind. A second process (or a second acquire() in one process) is
// refused with FailedPrecondition naming the directory and the PID the
// file names.
#pragma once

#include <filesystem>
#include <memory>

#include <absl/status/statusor.h>

namespace syncwrite::kvstore {

class DataDirLock {
 public:
  // Creates `dir` if needed, then locks it.
  static absl::StatusOr<std::unique_ptr<DataDirLock>> acquire(const std::filesystem::path& dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace syncwrite::kvstore
