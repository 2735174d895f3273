#include "config/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

namespace syncwrite::config {

absl::StatusOr<std::string> readFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", path.string()));
  std::string text;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      const int error = errno;
      ::close(fd);
      return absl::ErrnoToStatus(error, absl::StrCat("cannot read ", path.string()));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace syncwrite::config
