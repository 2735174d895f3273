// Parsing of the server's STAT "tasks" group by the idle-CPU harness.
#include "bench/idle_cpu/task_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace syncwrite::bench {
namespace {

using ::testing::HasSubstr;

std::map<std::string, std::string> Group() {
  return {{"timeout_task_runs_total", "1200"}, {"timeout_tasks_total", "2"},
          {"executor_nonio_threads", "2"},     {"b0:timeout_task_runs", "1000"},
          {"b0:timeout_mode", "polling"},      {"b1:timeout_task_runs", "200"},
          {"b1:timeout_mode", "event-driven"}, {"some_future_stat", "whatever"}};
}

TEST(TaskStats, ParsesTotalsAndPerBucketFigures) {
  absl::StatusOr<TaskStats> s = ParseTaskStats(Group());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->timeout_task_runs_total, 1200u);
  EXPECT_EQ(s->timeout_tasks_total, 2u);
  EXPECT_EQ(s->executor_nonio_threads, 2u);
  ASSERT_EQ(s->buckets.size(), 2u);
  EXPECT_EQ(s->buckets.at("b0").timeout_task_runs, 1000u);
  EXPECT_EQ(s->buckets.at("b0").timeout_mode, "polling");
  EXPECT_EQ(s->buckets.at("b1").timeout_mode, "event-driven");
}

TEST(TaskStats, ABucketNameWithAColonIsSplitAtTheLastOne) {
  auto group = Group();
  group["team:a:timeout_mode"] = "polling";
  absl::StatusOr<TaskStats> s = ParseTaskStats(group);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->buckets.at("team:a").timeout_mode, "polling");
}

TEST(TaskStats, AMissingTotalIsRefusedNamingIt) {
  for (const char* key :
       {"timeout_task_runs_total", "timeout_tasks_total", "executor_nonio_threads"}) {
    auto group = Group();
    group.erase(key);
    absl::StatusOr<TaskStats> s = ParseTaskStats(group);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(s.status().message(), HasSubstr(key));
  }
}

TEST(TaskStats, ANonNumericCounterIsRefusedNamingKeyAndValue) {
  for (const char* value : {"", "-1", "12abc", "1.5"}) {
    auto group = Group();
    group["b0:timeout_task_runs"] = value;
    absl::StatusOr<TaskStats> s = ParseTaskStats(group);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_THAT(s.status().message(), HasSubstr("b0:timeout_task_runs"));
  }
}

TEST(TaskStats, RunsPerSecondIsTheDeltaOverTheTime) {
  TaskStats before, after;
  before.timeout_task_runs_total = 100;
  after.timeout_task_runs_total = 500;
  EXPECT_DOUBLE_EQ(TimeoutRunsPerSecond(before, after, 10.0), 40.0);
  EXPECT_DOUBLE_EQ(TimeoutRunsPerSecond(before, before, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(TimeoutRunsPerSecond(before, after, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(TimeoutRunsPerSecond(after, before, 10.0), 0.0);  // went backwards
}

}  // namespace
}  // namespace syncwrite::bench
