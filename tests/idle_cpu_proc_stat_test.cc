// /proc/PID/stat parsing and thread listing of the idle-CPU harness.
#include "bench/idle_cpu/proc_stat.h"

#include <pthread.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

using ::testing::HasSubstr;

// A stat line as Linux writes it: utime 1234 and stime 56 are fields 14-15,
// num_threads 7 is field 20.
std::string StatLine(const std::string& pid, const std::string& comm) {
  return pid + " (" + comm +
         ") S 1 2 3 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 7 0 12345 1000000 200 "
         "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
}

TEST(ProcStat, ParsesTheFieldsAfterTheComm) {
  absl::StatusOr<ProcStat> st = ParseProcStat(StatLine("4242", "syncwrite-serve"));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->comm, "syncwrite-serve");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->utime, 1234u);
  EXPECT_EQ(st->stime, 56u);
  EXPECT_EQ(st->ticks(), 1290u);
  EXPECT_EQ(st->num_threads, 7u);
}

TEST(ProcStat, CommWithSpacesAndParenthesesIsSplitAtTheLastParenthesis) {
  // A process may name itself anything; splitting on spaces, or at the first
  // ')', would read the wrong fields.
  absl::StatusOr<ProcStat> st = ParseProcStat(StatLine("7", "a) b (c) 9 9 9"));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->comm, "a) b (c) 9 9 9");
  EXPECT_EQ(st->utime, 1234u);
  EXPECT_EQ(st->stime, 56u);
}

TEST(ProcStat, EmptyCommIsAllowed) {
  absl::StatusOr<ProcStat> st = ParseProcStat(StatLine("7", ""));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->comm, "");
}

TEST(ProcStat, RefusesMalformedLinesNamingTheProblem) {
  EXPECT_THAT(ParseProcStat("").status().message(), HasSubstr("no (comm)"));
  EXPECT_THAT(ParseProcStat("12 noparens S 1").status().message(), HasSubstr("no (comm)"));
  EXPECT_THAT(ParseProcStat(StatLine("x1", "c")).status().message(), HasSubstr("pid"));
  EXPECT_THAT(ParseProcStat("1 (c) S 1 2 3").status().message(), HasSubstr("too few fields"));
  std::string bad_utime = StatLine("1", "c");
  bad_utime.replace(bad_utime.find("1234"), 4, "12x4");
  EXPECT_THAT(ParseProcStat(bad_utime).status().message(), HasSubstr("utime"));
  EXPECT_EQ(ParseProcStat("").status().code(), absl::StatusCode::kInvalidArgument);
}

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) /
            ("fake_proc_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void Write(const std::filesystem::path& rel, const std::string& text) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }

  std::filesystem::path root_;
};

TEST_F(FakeProc, ListsThreadsByTidWithTheirCommFileNames) {
  Write("100/stat", StatLine("100", "server"));
  Write("100/task/102/stat", StatLine("102", "NonIoPool1"));
  Write("100/task/102/comm", "NonIoPool1\n");
  Write("100/task/102/schedstat", "123456789 2000 30\n");
  Write("100/task/100/stat", StatLine("100", "server"));
  Write("100/task/100/comm", "server\n");
  // No comm file (the thread exited between the two reads): the stat's name.
  Write("100/task/101/stat", StatLine("101", "mcbp_io0"));
  std::filesystem::create_directories(root_ / "100/task/not_a_tid");

  absl::StatusOr<std::vector<ThreadStat>> threads = ListThreads(100, root_);
  ASSERT_TRUE(threads.ok()) << threads.status();
  ASSERT_EQ(threads->size(), 3u);
  EXPECT_EQ((*threads)[0].tid, 100);
  EXPECT_EQ((*threads)[0].name, "server");
  EXPECT_EQ((*threads)[1].tid, 101);
  EXPECT_EQ((*threads)[1].name, "mcbp_io0");
  EXPECT_EQ((*threads)[2].tid, 102);
  EXPECT_EQ((*threads)[2].name, "NonIoPool1");
  EXPECT_EQ((*threads)[2].ticks, 1290u);
  EXPECT_EQ((*threads)[2].runtime_ns, 123456789u);
  EXPECT_FALSE((*threads)[0].runtime_ns.has_value());  // no schedstat file
}

TEST(ProcStat, SchedstatRuntimeIsTheFirstField) {
  EXPECT_EQ(ParseSchedstatRuntime("748696 0 1\n").value(), 748696u);
  EXPECT_EQ(ParseSchedstatRuntime("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ParseSchedstatRuntime("x 0 1").status().message(), HasSubstr("schedstat"));
}

TEST_F(FakeProc, AMalformedSchedstatIsAnError) {
  Write("100/task/100/stat", StatLine("100", "server"));
  Write("100/task/100/schedstat", "bogus");
  EXPECT_EQ(ListThreads(100, root_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FakeProc, AThreadThatVanishedBeforeItsStatIsSkipped) {
  Write("100/task/100/stat", StatLine("100", "server"));
  std::filesystem::create_directories(root_ / "100/task/101");  // exited: no files
  absl::StatusOr<std::vector<ThreadStat>> threads = ListThreads(100, root_);
  ASSERT_TRUE(threads.ok()) << threads.status();
  ASSERT_EQ(threads->size(), 1u);
  EXPECT_EQ((*threads)[0].tid, 100);
}

TEST_F(FakeProc, AMissingProcessIsNotFound) {
  EXPECT_EQ(ListThreads(999, root_).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadProcStat(999, root_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(FakeProc, AMalformedThreadStatIsAnError) {
  Write("100/task/100/stat", "garbage");
  EXPECT_EQ(ListThreads(100, root_).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ProcStatLive, FindsANamedThreadOfThisProcess) {
  std::mutex mu;
  std::condition_variable cv;
  bool named = false, release = false;
  pid_t tid = 0;
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "idle_cpu_probe");
    std::unique_lock lock(mu);
    tid = gettid();
    named = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return named; });
  }
  absl::StatusOr<std::vector<ThreadStat>> threads = ListThreads(getpid());
  absl::StatusOr<ProcStat> self = ReadProcStat(getpid());
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  worker.join();

  ASSERT_TRUE(threads.ok()) << threads.status();
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_EQ(self->pid, getpid());
  bool found = false;
  for (const ThreadStat& t : *threads)
    found = found || (t.tid == tid && t.name == "idle_cpu_probe");
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace syncwrite::bench
