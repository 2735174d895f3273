// syncwrite-server's command line (server/server_flags.h) and its CAS generator.
#include "server/server_flags.h"

#include <gtest/gtest.h>

#include "server/dispatcher.h"

namespace syncwrite::server {
namespace {

TEST(ServerOptions, DefaultsListenOnTheMemcachedPortOfLocalhost) {
  auto options = parseOptions({});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->host, "127.0.0.1");
  EXPECT_EQ(options->port, 11210);
  EXPECT_FALSE(options->config_path.has_value());
  EXPECT_FALSE(options->port_file.has_value());
}

TEST(ServerOptions, TakesValuesAfterASpaceOrAnEqualsSign) {
  auto options =
      parseOptions({"--config", "c.json", "--host=0.0.0.0", "--port", "0", "--port-file=/tmp/p"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->config_path, "c.json");
  EXPECT_EQ(options->host, "0.0.0.0");
  EXPECT_EQ(options->port, 0);
  EXPECT_EQ(options->port_file, "/tmp/p");
}

TEST(ServerOptions, RefusesWhatItDoesNotUnderstandNamingIt) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--verbose"}, "unknown flag --verbose"},
           {{"--port"}, "--port needs a value"},
           {{"--port", "65536"}, "--port: illegal value '65536'"},
           {{"--port", "12ab"}, "--port: illegal value '12ab'"},
           {{"--port", "-1"}, "--port: illegal value '-1'"},
           {{"--host="}, "--host needs a non-empty value"},
           {{"serve"}, "unexpected argument 'serve'"},
           {{"--", "--port=1"}, "unexpected argument '--port=1'"},
       }) {
    auto options = parseOptions(c.args);
    ASSERT_FALSE(options.ok()) << c.args.front();
    EXPECT_NE(options.status().message().find(c.message), std::string::npos)
        << options.status().message();
  }
}

TEST(ServerOptions, EveryParseStartsFromTheDefaults) {
  ASSERT_TRUE(parseOptions({"--port=1", "--config", "c.json"}).ok());
  ASSERT_FALSE(parseOptions({"--host", "h", "--bogus"}).ok());
  auto options = parseOptions({});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->port, 11210);
  EXPECT_EQ(options->host, "127.0.0.1");
  EXPECT_FALSE(options->config_path.has_value());
}

TEST(ServerOptions, HelpIsAnOptionNotAnError) {
  for (const char* help : {"--help", "-h"}) {
    auto options = parseOptions({help});
    ASSERT_TRUE(options.ok());
    EXPECT_TRUE(options->help);
  }
}

TEST(ServerOptions, UsageListsEveryFlagWithItsDefault) {
  const std::string text = usage();
  for (const char* line : {"--config ", "(default: \"\")", "--host ", "(default: \"127.0.0.1\")",
                           "--port ", "(default: 11210)", "--port-file "}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
}

TEST(ServerCas, IsUniqueAndIncreasingAcrossThreads) {
  std::vector<uint64_t> a, b;
  std::thread other([&] {
    for (int i = 0; i < 10000; ++i) b.push_back(Dispatcher::nextCas());
  });
  for (int i = 0; i < 10000; ++i) a.push_back(Dispatcher::nextCas());
  other.join();
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_TRUE(std::adjacent_find(a.begin(), a.end()) == a.end());
  std::vector<uint64_t> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  EXPECT_TRUE(std::adjacent_find(all.begin(), all.end()) == all.end());
}

}  // namespace
}  // namespace syncwrite::server
