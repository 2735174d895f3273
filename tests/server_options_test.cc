// syncwrite-server's command line (server/options.h) and its CAS generator.
#include "server/options.h"

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
           {{"--verbose"}, "unknown option '--verbose'"},
           {{"--port"}, "--port needs a value"},
           {{"--port", "65536"}, "'65536' is not a port number"},
           {{"--port", "12ab"}, "'12ab' is not a port number"},
           {{"--port", "-1"}, "'-1' is not a port number"},
           {{"--host="}, "--host needs a non-empty value"},
           {{"serve"}, "unexpected argument 'serve'"},
       }) {
    auto options = parseOptions(c.args);
    ASSERT_FALSE(options.ok()) << c.args.front();
    EXPECT_NE(options.status().message().find(c.message), std::string::npos)
        << options.status().message();
  }
}

TEST(ServerOptions, HelpIsAnOptionNotAnError) {
  auto options = parseOptions({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
  EXPECT_NE(usage().find("--port-file"), std::string::npos);
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
