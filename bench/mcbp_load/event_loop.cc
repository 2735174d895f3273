#include "bench/mcbp_load/event_loop.h"

#include <errno.h>
#include <sys/epoll.h>

#include <chrono>
#include <cstring>
#include <vector>

#include <absl/strings/str_cat.h>

#include "bench/epoll_fd.h"

namespace syncwrite::bench::mcbp_load {

namespace {

constexpr int kMaxEvents = 256;
constexpr int kHangCheckMs = 1000;

}  // namespace

void driveConnections(std::span<Connection* const> connections, std::span<absl::Status> errors) {
  EpollFd epoll;
  if (!epoll.ok()) {
    const std::string why = absl::StrCat("epoll_create1: ", std::strerror(errno));
    for (absl::Status& e : errors) e = absl::InternalError(why);
    return;
  }
  const size_t n = connections.size();
  std::vector<char> active(n, 0);
  std::vector<char> watching_out(n, 0);
  size_t remaining = 0;

  // Registers (op = ADD) or updates (MOD) connection i's interest.
  auto watch = [&](size_t i, int op) -> absl::Status {
    epoll_event event{};
    event.events = EPOLLIN | (connections[i]->wantsWrite() ? EPOLLOUT : 0u);
    event.data.u64 = i;
    if (::epoll_ctl(epoll.get(), op, connections[i]->fd(), &event) != 0) {
      return absl::InternalError(absl::StrCat("epoll_ctl: ", std::strerror(errno)));
    }
    watching_out[i] = connections[i]->wantsWrite() ? 1 : 0;
    return absl::OkStatus();
  };
  auto retire = [&](size_t i, absl::Status error) {
    if (!error.ok()) errors[i] = std::move(error);
    ::epoll_ctl(epoll.get(), EPOLL_CTL_DEL, connections[i]->fd(), nullptr);
    active[i] = 0;
    --remaining;
  };

  for (size_t i = 0; i < n; ++i) {
    if (connections[i]->done()) continue;
    if (absl::Status s = watch(i, EPOLL_CTL_ADD); !s.ok()) {
      errors[i] = std::move(s);
      continue;
    }
    active[i] = 1;
    ++remaining;
  }

  std::vector<epoll_event> events(kMaxEvents);
  using Clock = std::chrono::steady_clock;
  auto next_hang_check = Clock::now() + std::chrono::milliseconds(kHangCheckMs);
  while (remaining > 0) {
    const int ready = ::epoll_wait(epoll.get(), events.data(), kMaxEvents, kHangCheckMs);
    if (ready < 0 && errno != EINTR) {
      const std::string why = absl::StrCat("epoll_wait: ", std::strerror(errno));
      for (size_t i = 0; i < n; ++i) {
        if (active[i]) retire(i, absl::InternalError(why));
      }
      return;
    }
    for (int e = 0; e < ready; ++e) {
      const auto i = static_cast<size_t>(events[e].data.u64);
      if (!active[i]) continue;
      const uint32_t what = events[e].events;
      // An error or hang-up is read as readable: recv reports what happened.
      const bool readable = (what & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0;
      Connection& c = *connections[i];
      absl::Status s = c.onReady(readable, (what & EPOLLOUT) != 0);
      if (!s.ok() || c.done()) {
        retire(i, std::move(s));
      } else if ((c.wantsWrite() ? 1 : 0) != watching_out[i]) {
        if (absl::Status w = watch(i, EPOLL_CTL_MOD); !w.ok()) retire(i, std::move(w));
      }
    }
    const auto now = Clock::now();
    if (now < next_hang_check) continue;
    next_hang_check = now + std::chrono::milliseconds(kHangCheckMs);
    for (size_t i = 0; i < n; ++i) {
      if (!active[i]) continue;
      if (absl::Status s = connections[i]->checkHang(); !s.ok()) retire(i, std::move(s));
    }
  }
}

}  // namespace syncwrite::bench::mcbp_load
