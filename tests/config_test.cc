#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/configuration.h"
#include "config/keys_header.h"

namespace syncwrite::config {
namespace {

using std::chrono::milliseconds;
using testing::HasSubstr;
namespace k = keys;

std::string message(const absl::Status& s) { return std::string(s.message()); }

TEST(Configuration, StartsAtTheDefaults) {
  Configuration c(Scope::kBucket);
  EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), DurabilityTimeoutMode::kEventDriven);
  EXPECT_EQ(c.get(k::kDurabilityTimeoutTaskInterval), milliseconds(25));
  EXPECT_EQ(c.get(k::kDurabilityDefaultTimeout), milliseconds(30000));
  EXPECT_EQ(c.get(k::kDurabilityMinLevel), DurabilityMinLevel::kNone);
  EXPECT_EQ(c.get(k::kMaxVbucketVisitDuration), milliseconds(25));
  EXPECT_EQ(c.get(k::kDurabilityVisitorClock), DurabilityVisitorClock::kCoarse);
  EXPECT_EQ(c.get(k::kMaxVbuckets), 1024u);

  Configuration server(Scope::kServer);
  EXPECT_EQ(server.get(k::kNumNonioThreads), 0u);
  EXPECT_EQ(server.get(k::kNodeName), "active");
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
  EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), DurabilityTimeoutMode::kPolling);
  EXPECT_EQ(c.get(k::kMaxVbuckets), 64u);
  EXPECT_EQ(c.get(k::kDurabilityDefaultTimeout), milliseconds(30000));
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
        LoadCase{"Empty", "", "malformed JSON at byte 1"},
        // A parser exception that is not a parse_error (found by fuzzing).
        LoadCase{"NumberOverflow", R"({"max_size": 1e999})", "malformed JSON: "}),
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
  EXPECT_EQ(c.get(k::kDurabilityTimeoutTaskInterval), milliseconds(100));
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
  EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), DurabilityTimeoutMode::kEventDriven);
}

TEST(Configuration, SetChangesADynamicKey) {
  Configuration c(Scope::kBucket);
  ASSERT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kPolling).ok());
  EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), DurabilityTimeoutMode::kPolling);
  EXPECT_EQ(c.toJson()["durability_timeout_mode"], "polling") << "held as its schema spelling";
  ASSERT_TRUE(c.set(k::kDurabilityDefaultTimeout, milliseconds(50)).ok());
  EXPECT_EQ(c.get(k::kDurabilityDefaultTimeout), milliseconds(50));
  ASSERT_TRUE(c.setFromText("durability_timeout_task_interval", "5").ok());
  EXPECT_EQ(c.get(k::kDurabilityTimeoutTaskInterval), milliseconds(5));
  ASSERT_TRUE(c.setFromText("durability_min_level", "persist_to_majority").ok());
  EXPECT_EQ(c.get(k::kDurabilityMinLevel), DurabilityMinLevel::kPersistToMajority);
}

TEST(Configuration, RefusedSetsChangeNothing) {
  Configuration c(Scope::kBucket);
  const nlohmann::json before = c.toJson();

  absl::Status s = c.set(k::kMaxVbuckets, 16);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message(s), HasSubstr("max_vbuckets cannot be changed at runtime"));
  s = c.setFromText("max_vbuckets", "16");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);

  // A typed set is checked against the schema's range like any other.
  s = c.set(k::kDurabilityDefaultTimeout, milliseconds(65535));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("durability_default_timeout: 65535 is out of range, expected "
                                    "an unsigned integer in 1..65534 (milliseconds)"));
  s = c.set(k::kMaxVbucketVisitDuration, milliseconds(-1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("max_vbucket_visit_duration: -1 is not valid"));

  s = c.setFromText("durability_timeout_mode", "sometimes");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("durability_timeout_mode: \"sometimes\" is not valid, "
                                    "expected one of event-driven, polling"));

  s = c.setFromText("durability_timeout_task_interval", "0");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("0 is out of range"));

  s = c.setFromText("durability_timeout_task_interval", "fast");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("\"fast\" is not valid"));

  // Bytes that are not UTF-8 (found by fuzzing): refused, the refusal names
  // them with U+FFFD, and a string key does not store them.
  s = c.setFromText("durability_timeout_task_interval", "\xff");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("\"\xef\xbf\xbd\" is not valid"));
  s = c.setFromText("simulated_replicas_paused", "r\xff");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s),
              HasSubstr("simulated_replicas_paused: \"r\xef\xbf\xbd\" is not valid UTF-8"));

  s = c.setFromText("no_such_key", "1");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(message(s), HasSubstr("no_such_key"));

  s = c.setFromText("num_nonio_threads", "2");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(s), HasSubstr("num_nonio_threads is a server key, not a bucket key"));

  EXPECT_EQ(c.toJson(), before);
}

// A misspelt key or one of the wrong type does not compile (config/key.h); a
// key of the other scope is caught when used.
TEST(Configuration, AKeyOfTheOtherScopeIsAProgrammingError) {
  Configuration c(Scope::kBucket);
  EXPECT_THROW(c.get(k::kNumNonioThreads), std::invalid_argument);
  EXPECT_THROW(c.addListener(k::kNodeName, [](const std::string&) {}), std::invalid_argument);
  EXPECT_EQ(c.set(k::kMaxConnections, 5).code(), absl::StatusCode::kInvalidArgument);
}

// The typed keys and the schema the library parses come from the same file.
TEST(ConfigurationKeys, DeclareExactlyTheSchemasKeys) {
  const std::vector<KeySpec>& schema = Schema::builtin().keys();
  ASSERT_EQ(k::kAll.size(), schema.size());
  for (size_t i = 0; i < schema.size(); ++i) {
    EXPECT_EQ(k::kAll[i].name, schema[i].name);
    EXPECT_EQ(k::kAll[i].type, schema[i].type) << schema[i].name;
    EXPECT_EQ(k::kAll[i].scope, schema[i].scope) << schema[i].name;
  }
  static_assert(k::kDurabilityDefaultTimeout.name() == "durability_default_timeout");
  static_assert(
      std::is_same_v<decltype(k::kDurabilityDefaultTimeout), const Key<std::chrono::milliseconds>>);
  static_assert(k::kNodeName.scope() == Scope::kServer);
}

// Each enum key's generated enumerators are its allowed values, in order, and
// every one of them reads back as itself.
TEST(ConfigurationKeys, EveryEnumValueReadsBackAsItsEnumerator) {
  Configuration c(Scope::kBucket);
  auto check = [&](const auto& key) {
    using E = std::remove_cvref_t<decltype(c.get(key))>;
    const KeySpec& spec = *Schema::builtin().find(key.name());
    ASSERT_EQ(spec.values.size(), EnumSpellings<E>::kValues.size()) << spec.name;
    for (size_t i = 0; i < spec.values.size(); ++i) {
      ASSERT_TRUE(c.loadJson({{spec.name, spec.values[i]}}).ok()) << spec.values[i];
      EXPECT_EQ(c.get(key), static_cast<E>(i)) << spec.values[i];
      EXPECT_EQ(spellingOf(c.get(key)), spec.values[i]);
      EXPECT_EQ(enumFromSpelling<E>(spec.values[i]), static_cast<E>(i));
    }
  };
  check(k::kDurabilityTimeoutMode);
  check(k::kDurabilityMinLevel);
  check(k::kDurabilityVisitorClock);
  EXPECT_EQ(enumFromSpelling<DurabilityTimeoutMode>("Polling"), std::nullopt);
}

TEST(ConfigurationKeys, CppNamesOfSchemaSpellings) {
  EXPECT_EQ(cppNameOf("durability_timeout_mode"), "DurabilityTimeoutMode");
  EXPECT_EQ(cppNameOf("event-driven"), "EventDriven");
  EXPECT_EQ(cppNameOf("x2"), "X2");
  for (const char* refused : {"", "_a", "a_", "a__b", "2x", "a b", "a.b", "-"}) {
    EXPECT_EQ(cppNameOf(refused), std::nullopt) << refused;
  }
}

TEST(ConfigurationKeys, TheGeneratorRefusesNamesWithoutACppName) {
  auto schema = Schema::parse(R"({"keys": [
    {"name": "mode", "type": "enum", "values": ["a-b", "a_b"], "default": "a-b",
     "dynamic": true, "scope": "bucket", "description": "d"}]})");
  ASSERT_TRUE(schema.ok()) << schema.status();
  auto header = renderKeysHeader(*schema);
  EXPECT_EQ(header.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(header.status()), HasSubstr("\"mode\": value \"a_b\" has the same C++ name"));
}

TEST(ConfigurationListeners, CalledAfterAChangeWithTheNewValue) {
  Configuration c(Scope::kBucket);
  testing::MockFunction<void(DurabilityTimeoutMode)> listener;
  c.addListener(k::kDurabilityTimeoutMode, listener.AsStdFunction());
  EXPECT_CALL(listener, Call(DurabilityTimeoutMode::kPolling)).WillOnce([&](DurabilityTimeoutMode) {
    // The new value is already visible to readers.
    EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), DurabilityTimeoutMode::kPolling);
  });
  ASSERT_TRUE(c.setFromText("durability_timeout_mode", "polling").ok());
}

TEST(ConfigurationListeners, NotCalledForRefusedOrUnchangedValuesOrOtherKeys) {
  Configuration c(Scope::kBucket);
  testing::MockFunction<void(DurabilityTimeoutMode)> listener;
  c.addListener(k::kDurabilityTimeoutMode, listener.AsStdFunction());
  EXPECT_CALL(listener, Call(testing::_)).Times(0);
  EXPECT_FALSE(c.setFromText("durability_timeout_mode", "sometimes").ok());
  EXPECT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kEventDriven).ok());
  EXPECT_TRUE(c.set(k::kDurabilityTimeoutTaskInterval, milliseconds(10)).ok());
}

TEST(ConfigurationValidators, ARefusalIsReturnedAndChangesNothing) {
  Configuration c(Scope::kBucket);
  int calls = 0;
  c.addListener(k::kSimulatedReplicasPaused, [&](const std::string&) { ++calls; });
  const auto id = c.addValidator(k::kSimulatedReplicasPaused, [](const std::string& v) {
    return v == "nobody" ? absl::InvalidArgumentError("no replica 'nobody'") : absl::OkStatus();
  });
  const absl::Status refused = c.setFromText("simulated_replicas_paused", "nobody");
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), "no replica 'nobody'");
  EXPECT_EQ(c.get(k::kSimulatedReplicasPaused), "");
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(c.setFromText("simulated_replicas_paused", "replica1").ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(c.removeListener(id)) << "validators are removed like listeners";
  EXPECT_TRUE(c.setFromText("simulated_replicas_paused", "nobody").ok());
}

TEST(ConfigurationListeners, RemovedListenerIsNotCalled) {
  Configuration c(Scope::kBucket);
  int calls = 0;
  auto id = c.addListener(k::kDurabilityTimeoutMode, [&](DurabilityTimeoutMode) { ++calls; });
  ASSERT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kPolling).ok());
  EXPECT_TRUE(c.removeListener(id));
  EXPECT_FALSE(c.removeListener(id));
  ASSERT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kEventDriven).ok());
  EXPECT_EQ(calls, 1);
}

TEST(ConfigurationListeners, AListenerMayReadSetAndRemoveItself) {
  Configuration c(Scope::kBucket);
  Configuration::ListenerId self = 0;
  self = c.addListener(k::kDurabilityTimeoutMode, [&](DurabilityTimeoutMode v) {
    EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), v);
    EXPECT_TRUE(c.set(k::kDurabilityTimeoutTaskInterval,
                      milliseconds(v == DurabilityTimeoutMode::kPolling ? 50 : 25))
                    .ok());
    EXPECT_TRUE(c.removeListener(self));
  });
  ASSERT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kPolling).ok());
  EXPECT_EQ(c.get(k::kDurabilityTimeoutTaskInterval), milliseconds(50));
  ASSERT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kEventDriven).ok());
  EXPECT_EQ(c.get(k::kDurabilityTimeoutTaskInterval), milliseconds(50));
}

TEST(ConfigurationListeners, AThrowingListenerIsReportedAndOthersStillRun) {
  Configuration c(Scope::kBucket);
  bool second_ran = false;
  c.addListener(k::kDurabilityTimeoutMode,
                [](DurabilityTimeoutMode) { throw std::runtime_error("cannot switch"); });
  c.addListener(k::kDurabilityTimeoutMode, [&](DurabilityTimeoutMode) { second_ran = true; });
  absl::Status s = c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kPolling);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(message(s), HasSubstr("cannot switch"));
  EXPECT_TRUE(second_ran);
  EXPECT_EQ(c.get(k::kDurabilityTimeoutMode), DurabilityTimeoutMode::kPolling);
}

TEST(ConfigurationListeners, RemoveWaitsForARunningListener) {
  Configuration c(Scope::kBucket);
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  auto id = c.addListener(k::kDurabilityTimeoutMode, [&](DurabilityTimeoutMode) {
    entered = true;
    while (!release) std::this_thread::yield();
    finished = true;
  });
  std::thread setter(
      [&] { EXPECT_TRUE(c.set(k::kDurabilityTimeoutMode, DurabilityTimeoutMode::kPolling).ok()); });
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
  c.addListener(k::kDurabilityTimeoutTaskInterval, [&](milliseconds) { ++calls; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 1; i <= 200; ++i) {
        if (t % 2 == 0) {
          EXPECT_TRUE(c.set(k::kDurabilityTimeoutTaskInterval, milliseconds(i * 2 + t / 2)).ok());
        } else {
          const auto v = c.get(k::kDurabilityTimeoutTaskInterval);
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
