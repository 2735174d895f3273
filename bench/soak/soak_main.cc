// soak: a chaos soak against the real syncwrite-server (issue 18).
//
// Starts the server from its own config (one bucket of --vbuckets vbuckets and
// an 8 MiB quota, one simulated replica acking within a few ms, an external
// replica acking over DCP (dcp_replica.h), a couchbase bucket whose flusher
// writes RocksDB in the soak's directory), then for
// --duration_s runs --workers connections (worker.h: batches of reads and
// writes on their own keys, half the writes durable, checked as they are
// answered) and the external replica, beside the chaos thread (chaos.h:
// pauses of either replica, the external one's connection dropped, flusher
// stalls, timeout mode and interval changes, vbuckets made replica and
// active, dropped connections, junk). Then it checks:
//  - every SyncWrite in flight resolves once the faults are healed;
//  - every key holds a value its model allows (model.h);
//  - the bucket's resolved SyncWrites (committed + aborted on timeout +
//    ambiguous for another reason) are those the workers saw answered, plus
//    at most those in flight on the connections they dropped;
//  - once idle with only the observer connected: the server's threads and
//    file descriptors (besides its RocksDB files, which follow the data) are
//    those it had before the load, and (--check_rss) its
//    RSS is at most its level after warm-up + --rss_tolerance_percent, once
//    memory recovery had run by the end of the warm-up (before, the
//    checkpoints are still growing to their marks: the check is skipped, and
//    the report says so);
//  - a SIGTERM with --sigterm_writes SyncWrites pending answers each once,
//    ambiguous, closes the connection and exits 0.
// Text on stdout; JSON with --json. Exit status: 0 no anomaly, 1 anomalies
// (listed) or a failed run, 2 bad command line.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <absl/flags/flag.h>
#include <absl/flags/parse.h>
#include <absl/flags/usage.h>
#include <absl/strings/str_cat.h>
#include <nlohmann/json.hpp>

#include "bench/idle_cpu/machine.h"
#include "bench/idle_cpu/server_process.h"
#include "bench/mcbp_load/server_sample.h"
#include "bench/soak/chaos.h"
#include "bench/soak/dcp_replica.h"
#include "bench/soak/tally.h"
#include "bench/soak/worker.h"
#include "server/parse_number.h"
#include "server/protocol/client.h"
#include "server/protocol/request_encoder.h"

ABSL_FLAG(std::string, server, "", "syncwrite-server binary (default: beside this program)");
ABSL_FLAG(double, duration_s, 30, "seconds of load and faults");
ABSL_FLAG(double, warmup_s, 5, "seconds of load before the RSS is taken as the reference");
ABSL_FLAG(uint32_t, workers, 8, "client connections, one thread each");
ABSL_FLAG(uint32_t, keys_per_worker, 400, "keys each worker owns");
ABSL_FLAG(uint32_t, vbuckets, 64, "max_vbuckets of the bucket");
ABSL_FLAG(uint64_t, seed, 0, "random seed (0: from the clock; printed)");
ABSL_FLAG(uint32_t, sigterm_writes, 100, "SyncWrites pending at the final SIGTERM");
ABSL_FLAG(bool, check_rss, true,
          "fail when the idle RSS exceeds the warm-up RSS by more than --rss_tolerance_percent "
          "(off under sanitizers, whose allocators keep freed memory by design)");
ABSL_FLAG(double, rss_tolerance_percent, 10, "see --check_rss");
ABSL_FLAG(std::string, json, "", "write the report as JSON to this file");

namespace syncwrite::bench::soak {
namespace {

namespace fs = std::filesystem;
using server::protocol::Client;
using server::protocol::Status;

constexpr auto kGuard = std::chrono::seconds(60);

int64_t stat(Client& client, std::string_view group, std::string_view name) {
  auto reply = client.stats(group);
  if (!reply.ok() || !reply->ok()) return -1;
  auto value = reply->find(name);
  return value ? server::parseNumber<int64_t>(*value).value_or(-1) : -1;
}

template <typename Predicate>
bool waitFor(Predicate predicate) {
  const auto give_up = std::chrono::steady_clock::now() + kGuard;
  while (std::chrono::steady_clock::now() < give_up) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

using Process = mcbp_load::ServerSample;

// The server's RSS, threads and descriptors (mcbp_load's sampler); a failed
// read is an anomaly and samples zeros.
Process sample(pid_t pid, Anomalies& anomalies) {
  absl::StatusOr<Process> sampled = mcbp_load::sampleServer(pid);
  if (sampled.ok()) return *sampled;
  anomalies.add(absl::StrCat("sampling the server: ", sampled.status().message()));
  return {};
}

nlohmann::json toJson(const Process& p) {
  return {{"threads", p.threads},
          {"fds", p.open_fds},
          {"store_fds", p.store_fds},
          {"rss_kib", p.rss_kb}};
}

// The bucket's memory stats, for the report: what the server itself counts
// beside the RSS.
nlohmann::json memoryStats(Client& client) {
  nlohmann::json json = nlohmann::json::object();
  auto reply = client.stats("memory");
  if (reply.ok() && reply->ok()) {
    for (const auto& [key, value] : reply->stats) json[key] = value;
  }
  return json;
}

// N SyncWrites that cannot commit, then SIGTERM: each answered ambiguous,
// once, in order; the connection closed; exit 0.
void sigtermWithWritesPending(ServerProcess& process, Client& observer, Anomalies& anomalies,
                              nlohmann::json& out) {
  const uint32_t n = absl::GetFlag(FLAGS_sigterm_writes);
  auto admin = observer.setParam("simulated_replicas_paused", "replica1");
  if (!admin.ok() || !admin->ok()) {
    anomalies.add("SIGTERM phase: could not pause the replica");
    return;
  }
  auto writer = Client::connectToBucket("127.0.0.1", process.port(), "default", "soak-sigterm",
                                        {.timeout = kGuard});
  if (!writer.ok()) {
    anomalies.add(absl::StrCat("SIGTERM phase: cannot connect: ", writer.status().message()));
    return;
  }
  std::string bytes;
  std::vector<uint32_t> opaques;
  server::protocol::MutationOptions options;
  options.durability = server::protocol::DurabilitySpec{durability::Level::kMajority, 60000};
  for (uint32_t i = 0; i < n; ++i) {
    opaques.push_back(writer->nextOpaque());
    server::protocol::appendStore(bytes, server::protocol::Opcode::kSet, opaques.back(),
                                  static_cast<uint16_t>(i % absl::GetFlag(FLAGS_vbuckets)),
                                  absl::StrCat("sigterm", i), "v", options);
  }
  const int64_t before = stat(observer, "durability", "sync_writes_in_flight");
  if (!writer->sendRaw(bytes).ok() || !waitFor([&] {
        return stat(observer, "durability", "sync_writes_in_flight") == before + n;
      })) {
    anomalies.add("SIGTERM phase: the writes did not all become pending");
    return;
  }
  const auto sent = std::chrono::steady_clock::now();
  absl::Status stopped;
  std::thread stopper([&] { stopped = process.Stop(kGuard); });
  uint32_t ambiguous = 0;
  for (uint32_t opaque : opaques) {
    auto answer = writer->readResponse();
    if (!answer.ok()) {
      anomalies.add(absl::StrCat("SIGTERM phase: ", n - ambiguous,
                                 " write(s) unanswered: ", answer.status().message()));
      break;
    }
    if (answer->opaque != opaque || answer->status != Status::kSyncWriteAmbiguous) {
      anomalies.add(absl::StrCat("SIGTERM phase: answer ", answer->opaque, " ",
                                 std::string(server::protocol::toString(answer->status)), " where ",
                                 opaque, " SyncWriteAmbiguous was due"));
      break;
    }
    ++ambiguous;
  }
  if (ambiguous == n && !writer->waitForClose().ok()) {
    anomalies.add("SIGTERM phase: the connection was not closed after the answers");
  }
  stopper.join();
  if (!stopped.ok()) anomalies.add(absl::StrCat("SIGTERM phase: ", stopped.message()));
  out = {{"writes_pending", n},
         {"answered_ambiguous", ambiguous},
         {"exit_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count()},
         {"exit_ok", stopped.ok()}};
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "soak: reads, plain and durable writes on many connections against the real "
      "syncwrite-server while faults are injected; checks that nothing is lost, doubled, early "
      "or leaked");
  absl::ParseCommandLine(argc, argv);
  fs::path server_binary = absl::GetFlag(FLAGS_server);
  if (server_binary.empty()) {
    server_binary = fs::canonical("/proc/self/exe").parent_path() / "syncwrite-server";
  }
  const double duration_s = absl::GetFlag(FLAGS_duration_s);
  const double warmup_s = absl::GetFlag(FLAGS_warmup_s);
  const uint32_t workers_n = absl::GetFlag(FLAGS_workers);
  const uint32_t vbuckets = absl::GetFlag(FLAGS_vbuckets);
  if (duration_s <= 0 || warmup_s < 0 || warmup_s >= duration_s || workers_n < 1 ||
      absl::GetFlag(FLAGS_keys_per_worker) < 16 || vbuckets < 1 || vbuckets > 1024) {
    std::cerr << "soak: need duration_s > warmup_s >= 0, workers >= 1, keys_per_worker >= 16, "
                 "1 <= vbuckets <= 1024\n";
    return 2;
  }
  uint64_t seed = absl::GetFlag(FLAGS_seed);
  if (seed == 0)
    seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());

  char pattern[] = "/tmp/syncwrite-soak-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  if (made == nullptr) {
    std::cerr << "soak: mkdtemp failed\n";
    return 1;
  }
  const fs::path dir = made;
  const nlohmann::json config = {
      {"connection_idle_time", 0},
      {"data_dir", (dir / "data").string()},
      {"buckets",
       {{"default",
         {{"max_vbuckets", vbuckets},
          {"bucket_type", "couchbase"},
          // A small quota, so that the checkpoints reach their memory marks
          // and memory recovery runs within the warm-up: the RSS after it is
          // then the steady state a leak would grow beyond.
          {"max_size", 8 << 20},
          {"durability_timeout_task_interval", 20},
          {"flush_delay_ms", 2},
          {"replicas", {"replica1", DcpReplica::kName}},
          {"simulated_replicas", {{"replica1", {{"ack_delay_ms", 1}, {"ack_jitter_ms", 5}}}}}}}}}};
  std::ofstream(dir / "config.json") << config.dump(2);
  auto process = ServerProcess::Start(server_binary, dir / "config.json", dir / "port",
                                      dir / "server.log", std::chrono::seconds(30));
  if (!process.ok()) {
    std::cerr << "soak: " << process.status().message() << "\n";
    return 1;
  }
  const pid_t pid = (*process)->pid();
  const uint16_t port = (*process)->port();
  auto observer =
      Client::connectToBucket("127.0.0.1", port, "default", "soak-observer", {.timeout = kGuard});
  if (!observer.ok()) {
    std::cerr << "soak: " << observer.status().message() << "\n";
    return 1;
  }
  const MachineInfo machine = ReadMachineInfo();
  std::cout << "soak: seed " << seed << ", " << duration_s << " s, " << workers_n << " workers, "
            << machine.cpu_model << " (" << machine.cores << " cores)\n";

  Tally tally;
  Anomalies anomalies;
  const Process before = sample(pid, anomalies);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<Worker*> raw;
  for (uint32_t i = 0; i < workers_n; ++i) {
    workers.push_back(std::make_unique<Worker>(
        static_cast<int>(i), port, static_cast<int>(absl::GetFlag(FLAGS_keys_per_worker)),
        static_cast<int>(vbuckets), seed + 1 + i, tally, anomalies));
    raw.push_back(workers.back().get());
  }
  DcpReplica replica2(port, seed + workers_n + 1, anomalies);
  Chaos chaos(port, static_cast<int>(vbuckets), raw, replica2, seed, anomalies);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  threads.reserve(workers.size() + 2);
  const auto started = std::chrono::steady_clock::now();
  for (auto& worker : workers) threads.emplace_back([&stop, w = worker.get()] { w->run(stop); });
  threads.emplace_back([&] { replica2.run(stop); });
  threads.emplace_back([&] { chaos.run(stop); });

  std::this_thread::sleep_for(std::chrono::duration<double>(warmup_s));
  const Process warm = sample(pid, anomalies);
  const nlohmann::json warm_memory = memoryStats(*observer);
  std::this_thread::sleep_for(std::chrono::duration<double>(duration_s - warmup_s));
  stop.store(true);
  for (std::thread& t : threads) t.join();
  const double loaded_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  chaos.restore();

  if (!waitFor([&] { return stat(*observer, "durability", "sync_writes_in_flight") == 0; })) {
    anomalies.add(absl::StrCat("SyncWrites still in flight ", kGuard.count(),
                               " s after the faults were healed: ",
                               stat(*observer, "durability", "sync_writes_in_flight")));
  }
  for (auto& worker : workers) worker->checkFinal(*observer);

  const int64_t committed = stat(*observer, "durability", "sync_writes_committed");
  const int64_t aborted = stat(*observer, "durability", "sync_writes_aborted_timeout");
  const int64_t other = stat(*observer, "durability", "sync_writes_ambiguous_other");
  const int64_t resolved = committed + aborted + other;
  const uint64_t seen = tally.durable_committed.load() + tally.durable_ambiguous.load();
  const uint64_t dropped = tally.dropped_durable_unanswered.load();
  if (resolved < static_cast<int64_t>(seen) || resolved > static_cast<int64_t>(seen + dropped)) {
    anomalies.add(absl::StrCat("the bucket resolved ", resolved, " SyncWrites (", committed,
                               " committed, ", aborted, " aborted on timeout, ", other,
                               " ambiguous otherwise); the workers saw ", seen,
                               " answered and dropped ", dropped, " unanswered"));
  }

  if (!waitFor([&] { return stat(*observer, "", "connections") == 1; })) {
    anomalies.add("the workers' connections did not all close");
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // idle
  const Process idle = sample(pid, anomalies);
  const nlohmann::json idle_memory = memoryStats(*observer);
  if (idle.threads != before.threads) {
    anomalies.add(absl::StrCat("threads: ", before.threads, " before the load, ", idle.threads,
                               " idle after it"));
  }
  // The store's files follow the data (ServerSample::store_fds); every other
  // descriptor must be back to what it was.
  if (idle.open_fds - idle.store_fds != before.open_fds - before.store_fds) {
    anomalies.add(
        absl::StrCat("file descriptors (besides the store's): ", before.open_fds - before.store_fds,
                     " before the load, ", idle.open_fds - idle.store_fds, " idle after it"));
  }
  // The warm-up RSS is a reference only once the checkpoints have reached
  // their memory marks (memory recovery has run): before, the log is still
  // growing towards them by design.
  const double rss_limit =
      static_cast<double>(warm.rss_kb) * (1 + absl::GetFlag(FLAGS_rss_tolerance_percent) / 100);
  std::string rss_check = "off (--check_rss=false)";
  if (absl::GetFlag(FLAGS_check_rss)) {
    if (warm_memory.value("memory_recovery_runs", std::string("0")) == "0") {
      rss_check = "skipped: memory recovery had not run by the end of the warm-up (run longer)";
    } else if (static_cast<double>(idle.rss_kb) > rss_limit) {
      rss_check = "failed";
      anomalies.add(absl::StrCat("RSS ", idle.rss_kb, " KiB idle after the load, over ",
                                 static_cast<uint64_t>(rss_limit), " (warm-up ", warm.rss_kb,
                                 " KiB + ", absl::GetFlag(FLAGS_rss_tolerance_percent), "%)"));
    } else {
      rss_check = "passed";
    }
  }

  nlohmann::json sigterm;
  sigtermWithWritesPending(**process, *observer, anomalies, sigterm);

  const std::vector<std::string> kept = anomalies.kept();
  nlohmann::json statuses = nlohmann::json::object();
  for (size_t i = 0; i < tally.statuses.size(); ++i) {
    if (const uint64_t n = tally.statuses[i].load(); n != 0) {
      statuses[std::string(server::protocol::toString(static_cast<Status>(i)))] = n;
    }
  }
  nlohmann::json report = {
      {"machine",
       {{"cpu_model", machine.cpu_model}, {"cores", machine.cores}, {"kernel", machine.kernel}}},
      {"seed", seed},
      {"duration_s", loaded_s},
      {"workers", workers_n},
      {"requests", tally.requests.load()},
      {"answers", tally.answers.load()},
      {"reads", tally.reads.load()},
      {"plain_writes", tally.plain_writes.load()},
      {"durable_writes", tally.durable_writes.load()},
      {"durable_committed", tally.durable_committed.load()},
      {"durable_ambiguous", tally.durable_ambiguous.load()},
      {"durable_refused", tally.durable_refused.load()},
      {"dropped_unanswered", tally.dropped_unanswered.load()},
      {"statuses", statuses},
      {"bucket_resolved",
       {{"committed", committed}, {"aborted_timeout", aborted}, {"ambiguous_other", other}}},
      {"faults", chaos.counts()},
      {"replica2", replica2.counts()},
      {"server", {{"before", toJson(before)}, {"warm", toJson(warm)}, {"idle", toJson(idle)}}},
      {"rss_check", rss_check},
      {"memory_stats", {{"warm", warm_memory}, {"idle", idle_memory}}},
      {"sigterm", sigterm},
      {"anomalies", anomalies.count()},
      {"anomaly_examples", kept}};
  std::cout << report.dump(2) << "\n";
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << report.dump(2) << "\n";
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  if (anomalies.count() != 0) {
    std::cerr << "soak: " << anomalies.count() << " anomalies (first ones above); seed " << seed
              << "\n";
    return 1;
  }
  std::cout << "soak: no anomaly\n";
  return 0;
}

}  // namespace
}  // namespace syncwrite::bench::soak

int main(int argc, char** argv) {
  try {
    return syncwrite::bench::soak::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "soak: " << e.what() << "\n";
    return 1;
  }
}
