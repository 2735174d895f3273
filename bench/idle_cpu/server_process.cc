#include "bench/idle_cpu/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include <absl/strings/str_cat.h>

#include "config/read_file.h"
#include "server/parse_number.h"

extern char** environ;

namespace syncwrite::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::string Errno(std::string_view what) {
  return absl::StrCat(std::string(what), ": ", std::strerror(errno));
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status));
  return absl::StrCat("wait status ", status);
}

// Milliseconds left until `deadline`, for poll(); 0 once it has passed.
int MillisLeft(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)) : 0;
}

}  // namespace

absl::StatusOr<uint16_t> ParsePortFile(std::string_view text) {
  const std::optional<uint16_t> port = server::parseNumber<uint16_t>(text, 1);
  if (!port) {
    return absl::InvalidArgumentError(
        absl::StrCat("port file holds \"", std::string(text), "\": expected a port 1..65535"));
  }
  return *port;
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::filesystem::path& server, const std::filesystem::path& config,
    const std::filesystem::path& port_file, const std::filesystem::path& log_file,
    std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  // Watch the directory before spawning so the server cannot win the race.
  // The server writes the file atomically (a rename into place), which is
  // IN_MOVED_TO; IN_CLOSE_WRITE covers a server that writes it in place.
  const int inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd < 0) return absl::InternalError(Errno("inotify_init1"));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } inotify_closer{inotify_fd};
  if (inotify_add_watch(inotify_fd, port_file.parent_path().c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) <
      0) {
    return absl::InternalError(
        Errno(absl::StrCat("inotify_add_watch ", port_file.parent_path().string())));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const std::string server_s = server.string(), config_s = config.string(),
                    port_file_s = port_file.string();
  std::vector<char*> argv = {const_cast<char*>(server_s.c_str()),
                             const_cast<char*>("--config"),
                             const_cast<char*>(config_s.c_str()),
                             const_cast<char*>("--port"),
                             const_cast<char*>("0"),
                             const_cast<char*>("--port-file"),
                             const_cast<char*>(port_file_s.c_str()),
                             nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, server_s.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start ", server_s, ": ", std::strerror(rc)));
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const std::string why = Errno("pidfd_open");
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return absl::InternalError(why);
  }
  std::unique_ptr<ServerProcess> proc(new ServerProcess(pid, pidfd, log_file));

  for (;;) {
    // Checked first: the file may have been written before the watch fired.
    if (absl::StatusOr<std::string> text = config::readFile(port_file); text.ok()) {
      absl::StatusOr<uint16_t> port = ParsePortFile(*text);
      if (!port.ok()) return port.status();  // ~ServerProcess kills the child
      proc->port_ = *port;
      return proc;
    }
    pollfd fds[2] = {{inotify_fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
    const int left = MillisLeft(deadline);
    if (left == 0) {
      return absl::DeadlineExceededError(absl::StrCat(server_s, " wrote no port file within ",
                                                      timeout.count(), " ms; its log ends with:\n",
                                                      proc->LogTail()));
    }
    if (poll(fds, 2, left) < 0 && errno != EINTR) return absl::InternalError(Errno("poll"));
    if (fds[1].revents & POLLIN) {
      absl::StatusOr<int> status = proc->WaitExit(std::chrono::milliseconds(0));
      return absl::FailedPreconditionError(
          absl::StrCat(server_s, " exited before listening (",
                       status.ok() ? DescribeWaitStatus(*status) : status.status().ToString(),
                       "); its log ends with:\n", proc->LogTail()));
    }
    if (fds[0].revents & POLLIN) {
      char buf[4096];
      while (read(inotify_fd, buf, sizeof buf) > 0) {
      }
    }
  }
}

ServerProcess::~ServerProcess() { KillAndReap(); }

absl::StatusOr<int> ServerProcess::WaitExit(std::chrono::milliseconds timeout) {
  if (pid_ < 0) return absl::FailedPreconditionError("server already reaped");
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      close(pidfd_);
      pidfd_ = -1;
      return status;
    }
    if (r < 0 && errno != EINTR) return absl::InternalError(Errno("waitpid"));
    const int left = MillisLeft(deadline);
    if (left == 0) return absl::DeadlineExceededError("server still running");
    pollfd fd = {pidfd_, POLLIN, 0};
    if (poll(&fd, 1, left) < 0 && errno != EINTR) return absl::InternalError(Errno("poll"));
  }
}

absl::Status ServerProcess::Stop(std::chrono::milliseconds timeout) {
  if (pid_ < 0) return absl::FailedPreconditionError("server already stopped");
  if (kill(pid_, SIGTERM) != 0) return absl::InternalError(Errno("kill SIGTERM"));
  absl::StatusOr<int> status = WaitExit(timeout);
  if (!status.ok()) {
    KillAndReap();
    return absl::DeadlineExceededError(absl::StrCat("server did not exit within ", timeout.count(),
                                                    " ms of SIGTERM (killed); its log ends with:\n",
                                                    LogTail()));
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat("server stopped with ", DescribeWaitStatus(*status),
                                            " after SIGTERM; its log ends with:\n", LogTail()));
  }
  return absl::OkStatus();
}

void ServerProcess::KillAndReap() {
  if (pid_ < 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  close(pidfd_);
  pidfd_ = -1;
}

std::string ServerProcess::LogTail(size_t max_bytes) const {
  absl::StatusOr<std::string> text = config::readFile(log_file_);
  if (!text.ok()) return "(no log)";
  if (text->size() > max_bytes) return "..." + text->substr(text->size() - max_bytes);
  return *text;
}

}  // namespace syncwrite::bench
