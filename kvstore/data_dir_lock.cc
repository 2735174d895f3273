#include "kvstore/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include <absl/strings/ascii.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::kvstore {
namespace {

std::string errnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// The PID the lock file names, as text ("unknown" when it holds none).
std::string holderOf(int fd) {
  char buffer[32] = {};
  const ssize_t got = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (got <= 0) return "unknown";
  const std::string text(
      absl::StripAsciiWhitespace(absl::string_view(buffer, static_cast<size_t>(got))));
  return text.empty() ? "unknown" : text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DataDirLock>> DataDirLock::acquire(
    const std::filesystem::path& dir) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the data directory ", dir.string(), ": ", made.message()));
  }
  const std::filesystem::path file = dir / "syncwrite.lock";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open the lock file ", file.string(), ": ", errnoText(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = holderOf(fd);
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat("the data directory ", dir.string(),
                                                        " is in use by process ", holder,
                                                        " (it holds ", file.string(), ")"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot lock ", file.string(), ": ", errnoText(error)));
  }
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot write the lock file ", file.string(), ": ", errnoText(error)));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

DataDirLock::~DataDirLock() { ::close(fd_); }  // releases the flock

}  // namespace syncwrite::kvstore
