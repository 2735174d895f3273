#include "bench/mcbp_load/load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <absl/strings/str_cat.h>

#include "bench/mcbp_load/connection.h"
#include "bench/mcbp_load/event_loop.h"
#include "bench/mcbp_load/server_sample.h"

namespace syncwrite::bench::mcbp_load {

namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// What the threads and the calling thread share.
struct Shared {
  std::latch ready;
  std::latch go{1};
  std::atomic<bool> abandon{false};  // set before `go` when setup failed somewhere
  std::atomic<bool> stop{false};     // end of the duration: send no more
  std::mutex mutex;
  std::condition_variable finished_changed;
  unsigned finished = 0;  // guarded by mutex

  explicit Shared(unsigned threads) : ready(threads) {}
};

}  // namespace

absl::StatusOr<LoadResult> runLoad(const LoadOptions& options,
                                   const std::function<void(const Interval&)>& on_interval) {
  if (absl::Status valid = validate(options); !valid.ok()) return valid;
  std::optional<ServerSample> previous_sample;
  if (options.server_pid) {
    absl::StatusOr<ServerSample> sample = sampleServer(*options.server_pid);
    if (!sample.ok()) {
      return absl::Status(sample.status().code(), absl::StrCat("--server-pid ", *options.server_pid,
                                                               ": ", sample.status().message()));
    }
  }

  const Workload workload = Workload::build(options);
  const unsigned n = options.connections;
  const unsigned thread_count = threadCount(options);
  std::vector<std::unique_ptr<Connection>> connections(n);
  std::vector<absl::Status> setup(n), run(n);
  std::vector<double> preload_s(n, 0);
  Shared shared(thread_count);
  std::vector<std::thread> threads;
  threads.reserve(thread_count);
  for (unsigned t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      // This thread's connections: t, t + thread_count, ...
      std::vector<unsigned> mine;
      for (unsigned i = t; i < n; i += thread_count) mine.push_back(i);
      // Starts phase `start` on each of `mine` that is still fine, and drives
      // them to its end; errors into `status`.
      auto drive = [&](std::vector<absl::Status>& status, auto start) {
        std::vector<Connection*> started;
        std::vector<unsigned> index;
        for (unsigned i : mine) {
          if (!connections[i] || !setup[i].ok()) continue;
          absl::Status s = start(i, *connections[i]);
          if (!s.ok()) {
            status[i] = std::move(s);
            continue;
          }
          started.push_back(connections[i].get());
          index.push_back(i);
        }
        std::vector<absl::Status> errors(started.size());
        driveConnections(started, errors);
        for (size_t k = 0; k < started.size(); ++k) {
          if (!errors[k].ok()) status[index[k]] = std::move(errors[k]);
        }
      };
      for (unsigned i : mine) {
        auto opened = Connection::open(options, workload, i);
        if (opened.ok()) {
          connections[i] = std::move(*opened);
        } else {
          setup[i] = opened.status();
        }
      }
      if (options.preload) {
        const auto start = SteadyClock::now();
        drive(setup, [](unsigned, Connection& c) { return c.startPreload(); });
        // The thread's connections preload together: each took the whole time.
        for (unsigned i : mine) preload_s[i] = seconds(SteadyClock::now() - start);
      }
      shared.ready.count_down();
      shared.go.wait();
      if (!shared.abandon.load()) {
        drive(run, [&](unsigned i, Connection& c) -> absl::Status {
          const uint64_t budget =
              options.requests == 0 ? 0 : options.requests / n + (i < options.requests % n);
          // A budget of 0 with --requests means this connection sends
          // nothing: no phase starts, so it is done() and the loop skips it.
          if (options.requests != 0 && budget == 0) return absl::OkStatus();
          return c.startRun(budget, shared.stop);
        });
      }
      std::unique_lock lock(shared.mutex);
      ++shared.finished;
      shared.finished_changed.notify_all();
      // Exit together, once every thread is done: a thread's exit is kernel
      // work on the cores the server shares, and 300 of them trickling out
      // during bench/timeout_storm's commit storm delayed its last answer
      // (1.5-2.6 s after the resume, against 1.2-1.5 s).
      shared.finished_changed.wait(lock, [&] { return shared.finished == thread_count; });
    });
  }

  shared.ready.wait();
  absl::Status setup_error = absl::OkStatus();
  for (const absl::Status& s : setup) {
    if (!s.ok() && setup_error.ok()) setup_error = s;
  }
  if (!setup_error.ok()) shared.abandon.store(true);

  LoadResult result;
  result.options = options;
  if (options.server_pid) {
    if (auto sample = sampleServer(*options.server_pid); sample.ok()) previous_sample = *sample;
  }
  const std::optional<ServerSample> first_sample = previous_sample;
  const auto start = SteadyClock::now();
  shared.go.count_down();

  const bool by_duration = options.requests == 0;
  const auto deadline = start + options.duration;
  const bool intervals = options.report_interval.count() > 0;
  auto next_tick = start + options.report_interval;
  auto previous_tick = start;
  uint64_t previous_ops = 0;
  {
    std::unique_lock lock(shared.mutex);
    while (shared.finished < thread_count) {
      auto wake = SteadyClock::time_point::max();
      if (by_duration && !shared.stop.load()) wake = deadline;
      if (intervals) wake = std::min(wake, next_tick);
      shared.finished_changed.wait_until(lock, wake,
                                         [&] { return shared.finished == thread_count; });
      const auto now = SteadyClock::now();
      if (by_duration && now >= deadline) shared.stop.store(true);
      if (!intervals || now < next_tick || shared.finished == thread_count) continue;
      lock.unlock();
      Interval interval;
      uint64_t ops = 0;
      for (const auto& c : connections) {
        if (c) ops += c->stats().progress.load(std::memory_order_relaxed);
      }
      interval.end_s = seconds(now - start);
      interval.seconds = seconds(now - previous_tick);
      interval.ops = ops - previous_ops;
      interval.ops_per_s = static_cast<double>(interval.ops) / interval.seconds;
      if (options.server_pid) {
        if (auto sample = sampleServer(*options.server_pid); sample.ok()) {
          interval.server = ServerFigures{
              .rss_kb = sample->rss_kb,
              .threads = sample->threads,
              .open_fds = sample->open_fds,
              .cpu_percent = previous_sample ? cpuPercent(*previous_sample, *sample) : 0};
          previous_sample = *sample;
        }
      }
      previous_ops = ops;
      previous_tick = now;
      next_tick += options.report_interval;
      result.intervals.push_back(interval);
      if (on_interval) on_interval(interval);
      lock.lock();
    }
  }
  result.elapsed_s = seconds(SteadyClock::now() - start);
  for (std::thread& t : threads) t.join();
  if (!setup_error.ok()) return setup_error;

  if (first_sample) {
    if (auto sample = sampleServer(*options.server_pid); sample.ok()) {
      result.server_cpu_s = ticksToSeconds(sample->cpu_ticks - first_sample->cpu_ticks);
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    ConnectionStats& stats = connections[i]->stats();
    result.ops += stats.ops;
    result.latency.add(stats.latency);
    result.slow.insert(result.slow.end(), stats.slow.begin(), stats.slow.end());
    result.statuses.add(stats.statuses);
    result.preload_statuses.add(stats.preload_statuses);
    result.preload_s = std::max(result.preload_s, preload_s[i]);
    if (!run[i].ok()) result.errors.push_back(std::string(run[i].message()));
  }
  std::ranges::sort(result.slow, {}, &SlowRequest::answered_unix_s);
  return result;
}

}  // namespace syncwrite::bench::mcbp_load
