#include "server/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace syncwrite::server {

namespace {
std::atomic<LogSink> log_sink{nullptr};
}  // namespace

void setLogSink(LogSink sink) noexcept { log_sink.store(sink, std::memory_order_release); }

void logLine(std::string_view message) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t seconds = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[96];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(millis));
  std::string line;
  line.reserve(message.size() + 64);
  line.append(stamp).append(" syncwrite-server: ").append(message).push_back('\n');
  if (const LogSink sink = log_sink.load(std::memory_order_acquire); sink != nullptr) {
    sink(line);
    return;
  }
  // One write(2): lines from concurrent threads stay whole. A failed write to
  // stderr has nowhere to be reported.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

}  // namespace syncwrite::server
