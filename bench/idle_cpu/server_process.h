// ServerProcess: one syncwrite-server child, started for a scenario and
// stopped cleanly.
//
// start() spawns `server --config FILE --port 0 --port-file PATH` with its
// stdout and stderr in a log file, then waits — on events, not by sleeping —
// for the port file to appear (inotify on its directory) or the child to exit
// (a pidfd), under a hang guard. stop() sends SIGTERM and waits for the exit
// the same way; past the guard it sends SIGKILL and reports the hang. The
// destructor kills and reaps a child that was never stopped, so an error path
// never leaves a server running.
//
// Not thread-safe; one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

namespace syncwrite::bench {

// The port written in a port file: a number 1..65535 in server::parseNumber's
// syntax (so surrounding whitespace, such as the final newline, is fine).
// InvalidArgument quoting the text otherwise.
absl::StatusOr<uint16_t> ParsePortFile(std::string_view text);

class ServerProcess {
 public:
  // Spawns the server and waits until it listens. The port file must not
  // exist yet and its directory must exist. Errors: the binary cannot be
  // spawned; the child exits before listening (its exit status and the tail
  // of its log in the message); no port file within `timeout`
  // (DeadlineExceeded; the child is killed).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::filesystem::path& server, const std::filesystem::path& config,
      const std::filesystem::path& port_file, const std::filesystem::path& log_file,
      std::chrono::milliseconds timeout);

  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }

  // SIGTERM, then waits up to `timeout` for the exit. OK only for exit status
  // 0; otherwise an Internal error with the status (or DeadlineExceeded after
  // SIGKILL) and the log's tail.
  absl::Status Stop(std::chrono::milliseconds timeout);

  // The last `max_bytes` of the server's log.
  std::string LogTail(size_t max_bytes = 2000) const;

 private:
  ServerProcess(pid_t pid, int pidfd, std::filesystem::path log_file)
      : pid_(pid), pidfd_(pidfd), log_file_(std::move(log_file)) {}

  // Waits for the child's exit, up to `timeout`; the raw wait status, or
  // DeadlineExceeded leaving the child running.
  absl::StatusOr<int> WaitExit(std::chrono::milliseconds timeout);
  void KillAndReap();

  pid_t pid_ = -1;  // -1 once reaped
  int pidfd_ = -1;
  std::filesystem::path log_file_;
  uint16_t port_ = 0;
};

}  // namespace syncwrite::bench
