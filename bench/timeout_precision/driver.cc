#include "bench/timeout_precision/driver.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include <absl/strings/str_cat.h>

#include "bench/epoll_fd.h"
#include "server/protocol/client.h"
#include "server/protocol/request_encoder.h"

namespace syncwrite::bench {
namespace {

using Clock = std::chrono::steady_clock;
using server::protocol::Client;
using server::protocol::Opcode;
using server::protocol::Status;

constexpr uint16_t kHeadTimeoutMs = 30000;
// Past the last write's timeout: how long to wait for stragglers.
constexpr auto kAnswerGuard = std::chrono::seconds(10);

server::protocol::MutationOptions durable(uint16_t timeout_ms) {
  server::protocol::MutationOptions o;
  o.durability = server::protocol::DurabilitySpec{durability::Level::kMajority, timeout_ms};
  return o;
}

struct InFlight {
  Clock::time_point sent;
  uint16_t timeout_ms = 0;
};

class Epoll {
 public:
  bool ok() const { return fd_.ok(); }
  bool add(int fd, uint32_t index) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = index;
    return ::epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
  }
  // Waits up to `timeout`, to the nanosecond (epoll_pwait2, Linux 5.11): with
  // epoll_wait's milliseconds, a send due in under 1 ms was a zero timeout,
  // and at 2,000 writes/s the driver spun a whole core beside the server it
  // measures.
  int wait(epoll_event* events, int max, Clock::duration timeout) {
    timeout = std::max(timeout, Clock::duration::zero());
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    const timespec ts{static_cast<time_t>(s.count()),
                      static_cast<long>(std::chrono::nanoseconds(timeout - s).count())};
    return ::epoll_pwait2(fd_.get(), events, max, &ts, nullptr);
  }

 private:
  EpollFd fd_;
};

absl::StatusOr<Client> connect(const DriveOptions& o) {
  return Client::connectToBucket(o.host, o.port, o.bucket, "timeout_precision",
                                 {.timeout = std::chrono::seconds(70)});
}

// One 30 s write at the head of every vbucket, pipelined on `heads`; returns
// once the server reports them in flight (read on `admin`).
absl::Status HeadEveryVbucket(const DriveOptions& o, Client& heads, Client& admin) {
  std::string batch;
  for (uint16_t vb = 0; vb < o.vbuckets; ++vb) {
    server::protocol::appendStore(batch, Opcode::kSet, heads.nextOpaque(), vb,
                                  absl::StrCat("head-", vb), "v", durable(kHeadTimeoutMs));
  }
  if (absl::Status s = heads.sendRaw(batch); !s.ok()) return s;
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < give_up) {
    auto stats = admin.stats("durability");
    if (!stats.ok()) return stats.status();
    if (stats->find("sync_writes_in_flight").value_or("0") == std::to_string(o.vbuckets)) {
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return absl::DeadlineExceededError("the head writes were not all in flight within 10 s");
}

}  // namespace

absl::StatusOr<DriveResult> Drive(const DriveOptions& o) {
  if (o.connections == 0 || o.rate_per_s <= 0 || o.min_timeout_ms > o.max_timeout_ms ||
      o.vbuckets == 0) {
    return absl::InvalidArgumentError(
        "connections, rate and vbuckets must be positive and "
        "min_timeout <= max_timeout");
  }
  std::vector<Client> clients;
  clients.reserve(o.connections);
  Epoll epoll;
  if (!epoll.ok()) return absl::InternalError("epoll_create1 failed");
  for (unsigned i = 0; i < o.connections; ++i) {
    absl::StatusOr<Client> c = connect(o);
    if (!c.ok()) return c.status();
    clients.push_back(std::move(*c));
    if (!epoll.add(clients.back().nativeHandle(), i)) {
      return absl::InternalError("epoll_ctl failed");
    }
  }
  std::optional<Client> heads;
  if (o.behind_head) {
    absl::StatusOr<Client> h = connect(o);
    absl::StatusOr<Client> admin = connect(o);
    if (!h.ok()) return h.status();
    if (!admin.ok()) return admin.status();
    if (absl::Status s = HeadEveryVbucket(o, *h, *admin); !s.ok()) return s;
    heads = std::move(*h);  // kept open: its writes stay heads until the run ends
  }

  DriveResult result;
  std::mt19937 rng(o.seed);
  std::uniform_int_distribution<int> timeout_ms(o.min_timeout_ms, o.max_timeout_ms);
  std::vector<std::optional<InFlight>> in_flight(o.connections);
  std::vector<unsigned> idle;
  for (unsigned i = o.connections; i-- > 0;) idle.push_back(i);
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / o.rate_per_s));
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_sending = start + o.duration;
  const Clock::time_point give_up =
      stop_sending + std::chrono::milliseconds(o.max_timeout_ms) + kAnswerGuard;
  Clock::time_point next_send = start;
  uint64_t seq = 0;
  size_t outstanding = 0;
  std::vector<epoll_event> events(256);
  std::string request;

  while (true) {
    Clock::time_point now = Clock::now();
    while (now >= next_send && next_send < stop_sending) {
      next_send += interval;
      if (idle.empty()) {
        ++result.not_sent;
        continue;
      }
      const unsigned i = idle.back();
      idle.pop_back();
      const auto timeout = static_cast<uint16_t>(timeout_ms(rng));
      request.clear();
      server::protocol::appendStore(request, Opcode::kSet, clients[i].nextOpaque(),
                                    static_cast<uint16_t>(seq % o.vbuckets),
                                    absl::StrCat("tp-", seq), "v", durable(timeout));
      ++seq;
      in_flight[i] = InFlight{Clock::now(), timeout};
      if (absl::Status s = clients[i].sendRaw(request); !s.ok()) return s;
      ++result.sent;
      ++outstanding;
    }
    if (next_send >= stop_sending && outstanding == 0) break;
    if (now > give_up) {
      result.unanswered = outstanding;
      break;
    }
    Clock::duration wait = std::chrono::milliseconds(10);
    if (next_send < stop_sending) wait = next_send - Clock::now();
    const int n = epoll.wait(events.data(), static_cast<int>(events.size()), wait);
    // A failing wait (a sandbox refusing epoll_pwait2) would spin the loop
    // beside the server: stop with the reason instead.
    if (n < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("epoll_pwait2: ", std::strerror(errno)));
    }
    for (int e = 0; e < n; ++e) {
      const unsigned i = events[e].data.u32;
      absl::StatusOr<server::protocol::Response> answer = clients[i].readResponse();
      const Clock::time_point received = Clock::now();
      if (!answer.ok()) return answer.status();
      if (!in_flight[i]) {
        ++result.unexpected;  // an answer to nothing: a second answer
        continue;
      }
      if (answer->status == Status::kSyncWriteAmbiguous) {
        const auto elapsed = received - in_flight[i]->sent;
        result.lateness_ns.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(
                elapsed - std::chrono::milliseconds(in_flight[i]->timeout_ms))
                .count());
      } else {
        ++result.unexpected;
      }
      in_flight[i].reset();
      idle.push_back(i);
      --outstanding;
    }
  }
  return result;
}

}  // namespace syncwrite::bench
