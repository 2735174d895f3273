// EpollFd: an epoll instance's descriptor for the bench programs, closed when
// it goes out of scope. ok() is false when epoll_create1 failed (errno says
// why).
#pragma once

#include <sys/epoll.h>
#include <unistd.h>

namespace syncwrite::bench {

class EpollFd {
 public:
  EpollFd() : fd_(::epoll_create1(EPOLL_CLOEXEC)) {}
  ~EpollFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  EpollFd(const EpollFd&) = delete;
  EpollFd& operator=(const EpollFd&) = delete;

  bool ok() const noexcept { return fd_ >= 0; }
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

}  // namespace syncwrite::bench
