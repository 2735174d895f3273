#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/configuration.h"

namespace syncwrite::config {
namespace {

using std::chrono::milliseconds;
using testing::HasSubstr;

std::string message(const absl::Status& s) { return std::string(s.message()); }

TEST(Configuration, StartsAtTheDefaults) {
  Configuration c(Scope::kBucket);
  EXPECT_EQ(c.getString("durability_timeout_mode"), "event-driven");
  EXPECT_EQ(c.getDuration("durability_timeout_task_interval"), milliseconds(25));
  EXPECT_EQ(c.getDuration("durability_default_timeout"), milliseconds(30000));
  EXPECT_EQ(c.getString("durability_min_level"), "none");
  EXPECT_EQ(c.getDuration("max_vbucket_visit_duration"), milliseconds(25));
  EXPECT_EQ(c.getUnsigned("max_vbuckets"), 1024u);

  Configuration server(Scope::kServer);
  EXPECT_EQ(server.getUnsigned("num_nonio_threads"), 0u);
}

TEST(Configuration, EachScopeHoldsOnlyItsKeys) {
  Configuration bucket(Scope::kBucket);
  EXPECT_FALSE(bucket.toJson().contains("num_nonio_threads"));
  EXPECT_TRUE(bucket.toJson().contains("durability_timeout_mode"));
  Configuration server(Scope::kServer);
  EXPECT_FALSE(server.toJson().contains("durability_timeout_mode"));
}

TEST(Configuration, LoadsAJsonDocumentOverTheDefaults) {
  Configuration c(Scope::kBucket);
  ASSERT_TRUE(c.loadString(R"({"durability_timeout_mode": "polling", "max_vbuckets": 64})").ok());
  EXPECT_EQ(c.getString("durability_timeout_mode"), "polling");
  EXPECT_EQ(c.getUnsigned("max_vbuckets"), 64u);
  EXPECT_EQ(c.getDuration("durability_default_timeout"), milliseconds(30000));
}

// Every refusal of load leaves the configuration exactly as it was.
struct LoadCase {
  const char* name;
  const char* document;
  const char* expected_text;
};
void PrintTo(const LoadCase& c, std::ostream* os) { *os << c.name; }
class LoadRefusal : public testing::TestWithParam<LoadCase> {};

TEST_P(LoadRefusal, NamesTheProblemAndChangesNothing) {
  const auto [name, document, expected_text] = GetParam();
  Configuration c(Scope::kBucket);
  const nlohmann::json before = c.toJson();
  absl::Status s = c.loadString(document);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(message(s), HasSubstr(expected_text));
  EXPECT_EQ(c.toJson(), before);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, LoadRefusal,
    testing::Values(
        LoadCase{"UnknownKey", R"({"max_vbuckets": 64, "no_such_key": 1})",
                 "unknown configuration key \"no_such_key\""},
        LoadCase{"EnumGivenNumber", R"({"max_vbuckets": 64, "durability_timeout_mode": 3})",
                 "durability_timeout_mode: 3 is not valid, expected one of"},
        LoadCase{"UnsignedGivenString", R"({"max_vbuckets": "many"})",
                 "max_vbuckets: \"many\" is not valid, expected an unsigned integer"},
        LoadCase{"AboveMax", R"({"max_vbuckets": 2000})",
                 "max_vbuckets: 2000 is out of range, expected an unsigned integer in 1..1024"},
        LoadCase{"BelowMin", R"({"max_vbuckets": 0})", "max_vbuckets: 0 is out of range"},
        LoadCase{"TimeoutAboveMax", R"({"durability_default_timeout": 65535})",
                 "durability_default_timeout: 65535 is out of range"},
        LoadCase{"Negative", R"({"durability_default_timeout": -1})",
                 "durability_default_timeout: -1 is not valid"},
        LoadCase{"Fractional", R"({"max_vbucket_visit_duration": 1.5})",
                 "max_vbucket_visit_duration: 1.5 is not valid"},
        LoadCase{"NotInEnum", R"({"durability_min_level": "durable"})",
                 "durability_min_level: \"durable\" is not valid, expected one of none, "
                 "majority, majority_and_persist_on_master, persist_to_majority"},
        LoadCase{"OtherScope", R"({"num_nonio_threads": 4})",
                 "num_nonio_threads is a server key, not a bucket key"},
        LoadCase{"Truncated", R"({"max_vbuckets": 64,)", "malformed JSON at byte"},
        LoadCase{"NotAnObject", R"([1, 2])", "must be a JSON object"},
        LoadCase{"Empty", "", "malformed JSON at byte 1"}),
    [](const testing::TestParamInfo<LoadCase>& info) { return std::string(info.param.name); });

TEST(Configuration, MalformedJsonGivesItsPosition) {
  Configuration c(Scope::kBucket);
  absl::Status s = c.loadString("{\"max_vbuckets\": 64 x}");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("malformed JSON at byte 21"));
}

TEST(Configuration, LoadsAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("syncwrite_config_test_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << R"({"durability_timeout_task_interval": 100})";
  }
  Configuration c(Scope::kBucket);
  absl::Status s = c.loadFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(c.getDuration("durability_timeout_task_interval"), milliseconds(100));
}

TEST(Configuration, MissingFileIsNamed) {
  Configuration c(Scope::kBucket);
  absl::Status s = c.loadFile("/nonexistent/syncwrite.json");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(s), HasSubstr("/nonexistent/syncwrite.json"));
  EXPECT_THAT(message(s), HasSubstr("No such file"));
}

TEST(Configuration, ErrorsFromAFileNameTheFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("syncwrite_config_bad_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << R"({"durability_timeout_mode": "sometimes"})";
  }
  Configuration c(Scope::kBucket);
  absl::Status s = c.loadFile(path);
  std::filesystem::remove(path);
  EXPECT_THAT(message(s), HasSubstr(path.string()));
  EXPECT_THAT(message(s), HasSubstr("\"sometimes\""));
  EXPECT_EQ(c.getString("durability_timeout_mode"), "event-driven");
}

TEST(Configuration, SetChangesADynamicKey) {
  Configuration c(Scope::kBucket);
  ASSERT_TRUE(c.set("durability_timeout_mode", "polling").ok());
  EXPECT_EQ(c.getString("durability_timeout_mode"), "polling");
  ASSERT_TRUE(c.setFromText("durability_timeout_task_interval", "5").ok());
  EXPECT_EQ(c.getDuration("durability_timeout_task_interval"), milliseconds(5));
}

TEST(Configuration, RefusedSetsChangeNothing) {
  Configuration c(Scope::kBucket);
  const nlohmann::json before = c.toJson();

  absl::Status s = c.set("max_vbuckets", 16);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message(s), HasSubstr("max_vbuckets cannot be changed at runtime"));

  s = c.set("durability_timeout_mode", "sometimes");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("\"sometimes\""));

  s = c.setFromText("durability_timeout_task_interval", "0");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("0 is out of range"));

  s = c.setFromText("durability_timeout_task_interval", "fast");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("\"fast\" is not valid"));

  s = c.set("no_such_key", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(s), HasSubstr("no_such_key"));

  s = c.set("num_nonio_threads", 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(c.toJson(), before);
}

TEST(Configuration, WrongAccessorIsAProgrammingError) {
  Configuration c(Scope::kBucket);
  EXPECT_THROW(c.getBool("max_vbuckets"), std::invalid_argument);
  EXPECT_THROW(c.getUnsigned("durability_timeout_mode"), std::invalid_argument);
  EXPECT_THROW(c.getDuration("max_vbuckets"), std::invalid_argument);
  EXPECT_THROW(c.get("no_such_key"), std::invalid_argument);
  EXPECT_THROW(c.addListener("no_such_key", [](const nlohmann::json&) {}), std::invalid_argument);
}

TEST(ConfigurationListeners, CalledAfterAChangeWithTheNewValue) {
  Configuration c(Scope::kBucket);
  testing::MockFunction<void(const nlohmann::json&)> listener;
  c.addListener("durability_timeout_mode", listener.AsStdFunction());
  EXPECT_CALL(listener, Call(nlohmann::json("polling"))).WillOnce([&](const nlohmann::json&) {
    // The new value is already visible to readers.
    EXPECT_EQ(c.getString("durability_timeout_mode"), "polling");
  });
  ASSERT_TRUE(c.set("durability_timeout_mode", "polling").ok());
}

TEST(ConfigurationListeners, NotCalledForRefusedOrUnchangedValuesOrOtherKeys) {
  Configuration c(Scope::kBucket);
  testing::MockFunction<void(const nlohmann::json&)> listener;
  c.addListener("durability_timeout_mode", listener.AsStdFunction());
  EXPECT_CALL(listener, Call(testing::_)).Times(0);
  EXPECT_FALSE(c.set("durability_timeout_mode", "sometimes").ok());
  EXPECT_TRUE(c.set("durability_timeout_mode", "event-driven").ok());  // unchanged
  EXPECT_TRUE(c.set("durability_timeout_task_interval", 10).ok());
}

TEST(ConfigurationListeners, RemovedListenerIsNotCalled) {
  Configuration c(Scope::kBucket);
  int calls = 0;
  auto id = c.addListener("durability_timeout_mode", [&](const nlohmann::json&) { ++calls; });
  ASSERT_TRUE(c.set("durability_timeout_mode", "polling").ok());
  EXPECT_TRUE(c.removeListener(id));
  EXPECT_FALSE(c.removeListener(id));
  ASSERT_TRUE(c.set("durability_timeout_mode", "event-driven").ok());
  EXPECT_EQ(calls, 1);
}

TEST(ConfigurationListeners, AListenerMayReadSetAndRemoveItself) {
  Configuration c(Scope::kBucket);
  Configuration::ListenerId self = 0;
  self = c.addListener("durability_timeout_mode", [&](const nlohmann::json& v) {
    EXPECT_TRUE(c.set("durability_timeout_task_interval", v == "polling" ? 50 : 25).ok());
    EXPECT_TRUE(c.removeListener(self));
  });
  ASSERT_TRUE(c.set("durability_timeout_mode", "polling").ok());
  EXPECT_EQ(c.getDuration("durability_timeout_task_interval"), milliseconds(50));
  ASSERT_TRUE(c.set("durability_timeout_mode", "event-driven").ok());
  EXPECT_EQ(c.getDuration("durability_timeout_task_interval"), milliseconds(50));
}

TEST(ConfigurationListeners, AThrowingListenerIsReportedAndOthersStillRun) {
  Configuration c(Scope::kBucket);
  bool second_ran = false;
  c.addListener("durability_timeout_mode",
                [](const nlohmann::json&) { throw std::runtime_error("cannot switch"); });
  c.addListener("durability_timeout_mode", [&](const nlohmann::json&) { second_ran = true; });
  absl::Status s = c.set("durability_timeout_mode", "polling");
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(message(s), HasSubstr("cannot switch"));
  EXPECT_TRUE(second_ran);
  EXPECT_EQ(c.getString("durability_timeout_mode"), "polling");
}

TEST(ConfigurationListeners, RemoveWaitsForARunningListener) {
  Configuration c(Scope::kBucket);
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  auto id = c.addListener("durability_timeout_mode", [&](const nlohmann::json&) {
    entered = true;
    while (!release) std::this_thread::yield();
    finished = true;
  });
  std::thread setter([&] { EXPECT_TRUE(c.set("durability_timeout_mode", "polling").ok()); });
  while (!entered) std::this_thread::yield();
  std::atomic<bool> removed{false};
  std::thread remover([&] {
    c.removeListener(id);
    removed = true;
    EXPECT_TRUE(finished.load()) << "removeListener returned while its listener was running";
  });
  release = true;
  setter.join();
  remover.join();
  EXPECT_TRUE(removed);
}

TEST(ConfigurationListeners, ConcurrentSetsAndReadsAreSafe) {
  Configuration c(Scope::kBucket);
  std::atomic<int> calls{0};
  c.addListener("durability_timeout_task_interval", [&](const nlohmann::json&) { ++calls; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 1; i <= 200; ++i) {
        if (t % 2 == 0) {
          EXPECT_TRUE(c.set("durability_timeout_task_interval", i * 2 + t / 2).ok());
        } else {
          const auto v = c.getDuration("durability_timeout_task_interval");
          EXPECT_GE(v.count(), 1);
          EXPECT_LE(v.count(), 60000);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GT(calls.load(), 0);
}

}  // namespace
}  // namespace syncwrite::config
