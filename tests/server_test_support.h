// Test support for the server's integration tests: ServerProcess runs the real
// syncwrite-server binary on an ephemeral port and talks to it with the
// protocol layer's blocking Client.
//
// Waiting is for events, never for time: start() polls for the --port-file
// (every 5 ms, with a hang guard of kHangGuard, failing early if the process
// exits), and every Client call has its own hang guard. Nothing here asserts
// how long anything took.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "config/read_file.h"
#include "server/parse_number.h"
#include "server/protocol/byte_order.h"
#include "server/protocol/client.h"
#include "server/protocol/request_encoder.h"

#ifndef SYNCWRITE_SERVER_BINARY
#error "SYNCWRITE_SERVER_BINARY must name the syncwrite-server binary (tests/server.cmake)"
#endif

extern char** environ;

namespace syncwrite::server::testing {

inline constexpr std::chrono::seconds kHangGuard{30};

// A whole file, "" when it cannot be read (not written yet).
inline std::string fileText(const std::filesystem::path& path) {
  return config::readFile(path).value_or("");
}

class ServerProcess {
 public:
  ServerProcess() {
    char pattern[] = "/tmp/syncwrite-server-test-XXXXXX";
    const char* dir = ::mkdtemp(pattern);
    if (dir == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = dir;
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    // A sanitizer build of the server reports into its stderr: make it a failure here.
    const std::string err = stderrText();
    for (const char* report :
         {"ThreadSanitizer", "AddressSanitizer", "LeakSanitizer", "runtime error:"}) {
      if (err.find(report) != std::string::npos) ADD_FAILURE() << "server reported:\n" << err;
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Spawns the server with `args` (plus --port 0 --port-file unless
  // `listen` is false), its stderr going to a file. With `config_json`, the
  // text is written to a file passed as --config.
  void spawn(std::optional<std::string> config_json, std::vector<std::string> args = {},
             bool listen = true) {
    if (config_json) {
      const auto path = dir_ / "config.json";
      std::ofstream(path) << *config_json;
      args.insert(args.begin(), {"--config", path.string()});
    }
    if (listen) {
      args.insert(args.end(), {"--port", "0", "--port-file", portFile().string()});
    }
    std::vector<std::string> argv_strings = launcher_;
    argv_strings.emplace_back(SYNCWRITE_SERVER_BINARY);
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string err = stderrFile().string();
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("posix_spawn failed");
  }

  // Spawns and waits for the port file. Fails the test (and returns false)
  // when the server exits first or the hang guard passes.
  [[nodiscard]] bool start(std::optional<std::string> config_json = std::nullopt,
                           std::vector<std::string> args = {}) {
    spawn(std::move(config_json), std::move(args));
    const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
    while (std::chrono::steady_clock::now() < give_up) {
      const std::string text = fileText(portFile());
      if (!text.empty()) {
        const std::optional<uint16_t> port = parseNumber<uint16_t>(text, 1);
        if (!port) ADD_FAILURE() << "port file holds \"" << text << "\"";
        port_ = port.value_or(0);
        return port.has_value();
      }
      if (auto status = exited(); status) {
        ADD_FAILURE() << "server exited (" << *status << ") before listening: " << stderrText();
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "server did not write its port file: " << stderrText();
    return false;
  }

  uint16_t port() const noexcept { return port_; }
  pid_t pid() const noexcept { return pid_; }

  // Later spawns run `launcher` (an absolute path and its arguments) with
  // the server's path and arguments after it; the launcher must exec the
  // server in its own process, so that pid() is the server's.
  void launchThrough(std::vector<std::string> launcher) { launcher_ = std::move(launcher); }

  // A connected client that has sent nothing yet (no HELLO: a plain
  // memcached client until it sends one).
  protocol::Client connectRaw() const {
    auto client = protocol::Client::connect("127.0.0.1", port_);
    if (!client.ok()) throw std::runtime_error(std::string(client.status().message()));
    return std::move(*client);
  }

  // A connected client (HELLO done), with `bucket` selected unless empty.
  protocol::Client connect(std::string_view bucket = "default") const {
    auto client = protocol::Client::connectToBucket("127.0.0.1", port_, bucket, "syncwrite-test",
                                                    {.timeout = kHangGuard});
    if (!client.ok()) throw std::runtime_error(std::string(client.status().message()));
    return std::move(*client);
  }

  void signal(int sig) const { ::kill(pid_, sig); }
  // SIGSTOP, returning once the process is stopped (a signal is delivered
  // asynchronously: the process may run on for a moment). False after the
  // hang guard.
  [[nodiscard]] bool stop() const {
    signal(SIGSTOP);
    const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
    while (std::chrono::steady_clock::now() < give_up) {
      const std::string stat = fileText("/proc/" + std::to_string(pid_) + "/stat");
      const size_t paren = stat.rfind(')');
      if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T') {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  // Waits for the process to exit (hang guard: SIGKILL after kHangGuard) and
  // returns its exit status, or -signal when a signal ended it.
  int wait() {
    const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
    while (std::chrono::steady_clock::now() < give_up) {
      if (auto status = exited(); status) return *status;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "server did not exit; killing it";
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return -SIGKILL;
  }

  std::string stderrText() const { return fileText(stderrFile()); }
  // Where the server writes its port (--port-file): another node of a
  // cluster finds it there.
  std::filesystem::path portFile() const { return dir_ / "port"; }

 private:
  std::filesystem::path stderrFile() const { return dir_ / "stderr.txt"; }

  // The exit status once the process has exited (reaped here), else nullopt.
  std::optional<int> exited() {
    if (pid_ <= 0) return exit_status_;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    pid_ = -1;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return exit_status_;
  }

  std::filesystem::path dir_;
  std::vector<std::string> launcher_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  uint16_t port_ = 0;
};

// Waits until `predicate()` holds, polling every few ms (hang guard kHangGuard).
template <typename Predicate>
[[nodiscard]] bool eventually(Predicate predicate) {
  const auto give_up = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < give_up) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// The value of stat `name` in `group` as a number (-1 when missing, not a
// number or on error).
inline int64_t statValue(protocol::Client& client, std::string_view group, std::string_view name) {
  auto reply = client.stats(group);
  if (!reply.ok() || !reply->ok()) return -1;
  auto value = reply->find(name);
  return value ? parseNumber<int64_t>(*value).value_or(-1) : -1;
}

// SET_PARAM `key` = `value` on `client`; fails the test unless answered
// Success.
inline void setParam(protocol::Client& client, std::string_view key, std::string_view value) {
  auto r = client.setParam(key, value);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, protocol::Status::kSuccess) << r->errorContext();
}

// Sends `request` with a fresh opaque and reads the next answer.
inline absl::StatusOr<protocol::Response> call(protocol::Client& client,
                                               protocol::RequestFields request) {
  request.opaque = client.nextOpaque();
  if (auto sent = client.send(request); !sent.ok()) return sent;
  return client.readResponse();
}

// INCREMENT/DECREMENT's 20 bytes of extras.
inline std::string counterExtras(uint64_t delta, uint64_t initial, uint32_t expiry = 0) {
  std::string extras;
  protocol::wire::append64(extras, delta);
  protocol::wire::append64(extras, initial);
  protocol::wire::append32(extras, expiry);
  return extras;
}

// A majority durability requirement, with the bucket's default timeout or
// `timeout_ms`.
inline protocol::MutationOptions durable(std::optional<uint16_t> timeout_ms = std::nullopt) {
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{durability::Level::kMajority, timeout_ms};
  return options;
}

// Reads the next answer into `out` and checks that it is `opaque`'s, with
// `status`. Call it under ASSERT_NO_FATAL_FAILURE: a missing answer ends the test.
inline void readAnswer(protocol::Client& client, uint32_t opaque, protocol::Status status,
                       protocol::Response* out = nullptr) {
  auto answer = client.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->opaque, opaque);
  EXPECT_EQ(answer->status, status) << "opaque " << opaque;
  if (out != nullptr) *out = *std::move(answer);
}

// A config with one bucket "default" whose only replica is silent (listed,
// not simulated), so every SyncWrite waits for DCP acks or times out.
inline std::string silentReplicaConfig(std::string_view mode,
                                       std::string_view extra_bucket_keys = "") {
  std::string config = R"({"buckets": {"default": {"durability_timeout_mode": ")";
  config += mode;
  config += R"(", "durability_timeout_task_interval": 5, "replicas": ["replica1"])";
  config += extra_bucket_keys;
  config += "}}}";
  return config;
}

// A cluster's configuration, the same file for every node: `nodes` named
// n1, n2, ... in order, each found through its port file, the default user
// as replication_user, and one bucket "default" of `max_vbuckets` vbuckets
// with `num_replicas` replicas each (vbucket v's chain starts at node v mod
// the node count). `persistent`: a couchbase bucket, each node's data in
// "data" beside its port file.
inline std::string clusterConfig(const std::vector<const ServerProcess*>& nodes, int num_replicas,
                                 int max_vbuckets, bool persistent = false) {
  std::string listed;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0) listed += ", ";
    listed += "\"n" + std::to_string(i + 1) + R"(": {"host": "127.0.0.1", "port_file": ")" +
              nodes[i]->portFile().string() + "\"";
    if (persistent) {
      listed +=
          R"(, "data_dir": ")" + (nodes[i]->portFile().parent_path() / "data").string() + "\"";
    }
    listed += "}";
  }
  return R"({"users": {"Administrator": {"password": "password"}},
      "cluster": {"replication_user": "Administrator", "nodes": {)" +
         listed + R"(}},
      "buckets": {"default": {"num_replicas": )" +
         std::to_string(num_replicas) + R"(, "max_vbuckets": )" + std::to_string(max_vbuckets) +
         (persistent ? R"(, "bucket_type": "couchbase")" : "") + "}}}";
}

}  // namespace syncwrite::server::testing
