// A couchbase bucket whose disk fills up under the running server: the data
// directory is a small tmpfs mounted in a mount namespace of the server's own
// (unshare), filled from outside through /proc/PID/root. The flusher's write
// fails with RocksDB's no-space error, logged once with the path and the
// status; persist-level SyncWrites wait and time out ambiguous, reads and
// plain writes go on; once there is room again the kept batch is written,
// the recovery is logged and persist-level writes commit.
#include <sys/statvfs.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>

#include "tests/server_test_support.h"

namespace syncwrite::server {
namespace {

using protocol::Status;
using testing::eventually;
using testing::ServerProcess;
using testing::statValue;

protocol::MutationOptions withLevel(durability::Level level, uint16_t timeout_ms) {
  protocol::MutationOptions options;
  options.durability = protocol::DurabilitySpec{level, timeout_ms};
  return options;
}

// Fills the filesystem at `dir` with one file; returns its path.
std::filesystem::path fill(const std::filesystem::path& dir) {
  struct statvfs fs {};
  EXPECT_EQ(::statvfs(dir.c_str(), &fs), 0) << dir;
  std::filesystem::path filler = dir / "filler";
  std::ofstream out(filler, std::ios::binary);
  const std::string chunk(1 << 16, 'f');
  for (uint64_t left = uint64_t{fs.f_bavail} * fs.f_bsize; left > 0 && out.good();) {
    const size_t n = std::min<uint64_t>(left, chunk.size());
    out.write(chunk.data(), static_cast<std::streamsize>(n));
    left -= n;
  }
  return filler;
}

TEST(DiskFailure, AFullDiskHoldsPersistLevelsThenTheKeptBatchIsWrittenOnceThereIsRoom) {
  ServerProcess server;
  const std::filesystem::path data = server.portFile().parent_path() / "data";
  std::filesystem::create_directories(data);
  // RocksDB preallocates its log as big as a memtable (8 MiB): 24 MiB leaves
  // room for it and the first files, and the filler takes the rest.
  // --map-root-user: an unprivileged user may mount in a namespace of its own.
  server.launchThrough({"/usr/bin/unshare", "--map-root-user", "--mount", "--propagation",
                        "private", "/bin/sh", "-c",
                        absl::StrCat("mount -t tmpfs -o size=24m syncwrite-test '", data.string(),
                                     "' && exec \"$0\" \"$@\"")});
  ASSERT_TRUE(server.start(absl::StrCat(R"({"data_dir": ")", data.string(),
                                        R"(", "buckets": {"default": {"bucket_type": "couchbase",
                                            "max_vbuckets": 4}}})")));
  auto client = server.connect();
  auto admin = server.connect();
  const durability::Level persist = durability::Level::kMajorityAndPersistOnMaster;
  auto before = client.set(0, "before", "on disk", withLevel(persist, 30000));
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->status, Status::kSuccess) << before->errorContext();

  // The server's view of its data directory: its own tmpfs.
  const std::filesystem::path seen =
      std::filesystem::path(absl::StrCat("/proc/", server.pid(), "/root")) / data.relative_path();
  const std::filesystem::path filler = fill(seen);
  // Plain writes go on while the flusher's writes fail: past the log's
  // preallocated room, RocksDB runs out of space.
  const std::string value(32 << 10, 'v');
  int written = 0;
  ASSERT_TRUE(eventually([&] {
    auto r = client.set(static_cast<uint16_t>(written % 4), absl::StrCat("plain", written), value);
    if (!r.ok() || r->status != Status::kSuccess) return false;
    ++written;
    return statValue(admin, "memory", "flusher_write_failures") > 0;
  })) << server.stderrText();
  EXPECT_NE(server.stderrText().find("failed ("), std::string::npos) << server.stderrText();
  EXPECT_NE(server.stderrText().find(data.string()), std::string::npos) << server.stderrText();
  EXPECT_NE(server.stderrText().find("space"), std::string::npos) << server.stderrText();

  auto held = client.set(1, "held", "v", withLevel(persist, 300));
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->status, Status::kSyncWriteAmbiguous) << held->errorContext();
  auto read = client.get(0, "before");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, Status::kSuccess);
  EXPECT_EQ(read->value, "on disk");
  auto plain = client.set(2, "plain-after", "v");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, Status::kSuccess) << plain->errorContext();

  std::filesystem::remove(filler);
  auto after = client.set(3, "after", "v", withLevel(persist, 30000));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status, Status::kSuccess) << after->errorContext();
  auto memory = admin.stats("memory");
  ASSERT_TRUE(memory.ok() && memory->ok());
  EXPECT_EQ(memory->find("flusher_failing").value_or(""), "false");
  EXPECT_NE(server.stderrText().find("work again after"), std::string::npos) << server.stderrText();
  EXPECT_TRUE(eventually([&] { return statValue(admin, "memory", "flusher_items_queued") == 0; }));
}

}  // namespace
}  // namespace syncwrite::server
