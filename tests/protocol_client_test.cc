// Client against a small in-test server built from the same codec: round
// trips, pipelining, STAT, stray answers to seqno acks, timeouts and errors.
#include "server/protocol/client.h"

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "server/cli/cli_args.h"
#include "server/cli/cli_run.h"
#include "server/protocol/packet_reader.h"
#include "server/protocol/request.h"
#include "server/protocol/response_encoder.h"

namespace syncwrite::server::protocol {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Serves `connections` connections one after the other on 127.0.0.1, each
// until the client closes it. Every handler runs on the server thread.
class FakeServer {
 public:
  explicit FakeServer(int connections = 1)
      : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this, connections] {
      for (int i = 0; i < connections; ++i) serveOne();
    });
  }
  ~FakeServer() { thread_.join(); }

  uint16_t port() const { return port_; }

 private:
  void serveOne() {
    tcp::socket socket(io_);
    acceptor_.accept(socket);
    PacketReader reader(PacketReader::Direction::kRequests, 4096);
    boost::system::error_code ec;
    while (true) {
      std::span<char> space = reader.prepare();
      const size_t n = socket.read_some(asio::buffer(space.data(), space.size()), ec);
      if (ec) return;  // the client closed
      reader.commit(n);
      std::string out;
      bool close = false;
      for (auto next = reader.next(); !close; next = reader.next()) {
        if (next.result == PacketReader::Result::kNeedMore) break;
        if (next.result == PacketReader::Result::kBadMagic) close = true;
        if (next.result == PacketReader::Result::kTooBig) {
          appendStatusResponse(out, next.header.opcode, Status::kTooBig, next.header.opaque);
          close = true;
        }
        if (next.result == PacketReader::Result::kPacket) close = answer(next.packet, out);
      }
      asio::write(socket, asio::buffer(out), ec);
      if (close || ec) return;
    }
  }

  // Appends the answer to `packet`; true to close the connection after it.
  static bool answer(const Packet& packet, std::string& out) {
    const ParseResult parsed = parseRequest(packet);
    if (!parsed.ok()) {
      appendParseError(out, parsed);
      return false;
    }
    const Request& r = parsed.request;
    switch (r.opcode) {
      case Opcode::kHello:
        appendHelloResponse(out, r.opaque, negotiateFeatures(r.value));
        break;
      case Opcode::kGet:
        if (r.key == "missing") {
          appendErrorResponse(out, r.opcode, Status::kKeyNotFound, r.opaque, "");
        } else {
          appendGetResponse(out, r.opaque, 5, 0x01020304, "value-of-" + std::string(r.key));
        }
        break;
      case Opcode::kSet:
      case Opcode::kAdd:
      case Opcode::kReplace:
      case Opcode::kDelete:
        if (r.durability) {
          appendErrorResponse(out, r.opcode, Status::kSyncWriteAmbiguous, r.opaque,
                              "durability timeout");
        } else {
          appendStatusResponse(out, r.opcode, Status::kSuccess, r.opaque, uint64_t{r.opaque} * 10);
        }
        break;
      case Opcode::kStat:
        if (r.key == "bad") {
          appendErrorResponse(out, r.opcode, Status::kEinval, r.opaque, "unknown stat group bad");
        } else {
          appendStatResponse(out, r.opaque, "group", r.key);
          appendStatResponse(out, r.opaque, "mode", "event-driven");
          appendStatEnd(out, r.opaque);
        }
        break;
      case Opcode::kSetParam:
        if (r.value == "bad") {
          appendErrorResponse(out, r.opcode, Status::kEinval, r.opaque,
                              std::string(r.key) + ": bad value");
        } else {
          appendStatusResponse(out, r.opcode, Status::kSuccess, r.opaque);
        }
        break;
      case Opcode::kDcpSeqnoAcknowledged:
        if (r.vbucket == 999) {
          appendErrorResponse(out, r.opcode, Status::kNotMyVbucket, r.opaque, "");
        }
        break;  // no answer on success
      case Opcode::kVersion:
        break;  // never answered: the hang guard's test
      case Opcode::kQuit:
        appendStatusResponse(out, r.opcode, Status::kSuccess, r.opaque);
        return true;
      default:
        appendStatusResponse(out, r.opcode, Status::kSuccess, r.opaque);
        break;
    }
    return false;
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread thread_;
};

Client connectTo(const FakeServer& server, std::chrono::milliseconds timeout = 30'000ms) {
  absl::StatusOr<Client> client = Client::connect("127.0.0.1", server.port(), {.timeout = timeout});
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST(ClientTest, ConnectToBucketSaysHelloAndSelectsTheBucket) {
  FakeServer server;
  absl::StatusOr<Client> client =
      Client::connectToBucket("127.0.0.1", server.port(), "default", "test", {.timeout = 30'000ms});
  ASSERT_TRUE(client.ok()) << client.status();
  auto got = client->get(3, "k1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value, "value-of-k1");
  EXPECT_TRUE(client->takeStrayResponses().empty());
}

TEST(ClientTest, CommandsRoundTrip) {
  FakeServer server;
  Client client = connectTo(server);

  auto features = client.hello(
      std::vector<Feature>{Feature::kXerror, Feature::kTls, Feature::kSyncReplication});
  ASSERT_TRUE(features.ok()) << features.status();
  EXPECT_EQ(*features, (std::vector<Feature>{Feature::kXerror, Feature::kSyncReplication}));

  auto selected = client.selectBucket("default");
  ASSERT_TRUE(selected.ok());
  EXPECT_TRUE(selected->ok());

  auto got = client.get(3, "k1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->value, "value-of-k1");
  EXPECT_EQ(got->cas, 5u);

  auto missing = client.get(3, "missing");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, Status::kKeyNotFound);

  auto set = client.set(3, "k", "v");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->ok());
  EXPECT_EQ(set->cas, set->opaque * 10);

  auto durable = client.replace(3, "k", "v",
                                {.durability = DurabilitySpec{durability::Level::kMajority, 500}});
  ASSERT_TRUE(durable.ok());
  EXPECT_EQ(durable->status, Status::kSyncWriteAmbiguous);
  EXPECT_EQ(durable->errorContext(), "durability timeout");

  EXPECT_TRUE(client.add(1, "a", "b")->ok());
  EXPECT_TRUE(client.del(1, "a")->ok());
  EXPECT_TRUE(client.noop()->ok());
  EXPECT_TRUE(client.setVbucketState(4, VbucketState::kReplica)->ok());
  EXPECT_TRUE(client.dcpOpen("replica1")->ok());

  auto refused = client.setParam("durability_timeout_mode", "bad");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kEinval);
  EXPECT_EQ(refused->errorContext(), "durability_timeout_mode: bad value");
  EXPECT_TRUE(client.setParam(ParamType::kConfig, "durability_timeout_mode", "polling")->ok());

  auto quit = client.quit();
  ASSERT_TRUE(quit.ok());
  EXPECT_TRUE(quit->ok());
  EXPECT_TRUE(client.waitForClose().ok());
}

TEST(ClientTest, StatsReadsUpToTheTerminator) {
  FakeServer server;
  Client client = connectTo(server);
  auto stats = client.stats("durability");
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(stats->ok());
  ASSERT_EQ(stats->stats.size(), 2u);
  EXPECT_EQ(stats->find("group"), "durability");
  EXPECT_EQ(stats->find("mode"), "event-driven");
  EXPECT_FALSE(stats->find("absent"));

  auto bad = client.stats("bad");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, Status::kEinval);
  EXPECT_EQ(bad->error_context, "unknown stat group bad");
  EXPECT_TRUE(bad->stats.empty());

  EXPECT_TRUE(client.noop()->ok());  // the stream is still in step
}

TEST(ClientTest, PipelinedRequestsAnswerInOrder) {
  FakeServer server;
  Client client = connectTo(server);
  std::string batch;
  std::vector<uint32_t> opaques;
  for (int i = 0; i < 20; ++i) {
    opaques.push_back(client.nextOpaque());
    appendGet(batch, opaques.back(), 0, "key-" + std::to_string(i));
  }
  ASSERT_TRUE(client.sendRaw(batch).ok());
  for (int i = 0; i < 20; ++i) {
    auto response = client.readResponse();
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->opaque, opaques[i]);
    EXPECT_EQ(response->value, "value-of-key-" + std::to_string(i));
  }
}

TEST(ClientTest, SeqnoAckIsUnansweredAndItsErrorIsAStray) {
  FakeServer server;
  Client client = connectTo(server);
  ASSERT_TRUE(client.dcpOpen("replica1")->ok());
  ASSERT_TRUE(client.seqnoAck(0, 1).ok());
  ASSERT_TRUE(client.seqnoAck(999, 2).ok());  // answered NotMyVbucket
  auto noop = client.noop();
  ASSERT_TRUE(noop.ok());
  EXPECT_TRUE(noop->ok());
  std::vector<Response> stray = client.takeStrayResponses();
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0].opcode, Opcode::kDcpSeqnoAcknowledged);
  EXPECT_EQ(stray[0].status, Status::kNotMyVbucket);
  EXPECT_TRUE(client.takeStrayResponses().empty());
}

TEST(ClientTest, MalformedRequestsGetErrorsAndTheConnectionStays) {
  FakeServer server;
  Client client = connectTo(server);
  ASSERT_TRUE(client
                  .send({.opcode = Opcode::kSet,
                         .opaque = 77,
                         .durability = DurabilitySpec{durability::Level::kMajority, 0},
                         .extras = std::string(8, '\0'),
                         .key = "k"})
                  .ok());
  auto refused = client.readResponse();  // a reserved timeout: 0xa0, as kv_engine
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, Status::kDurabilityInvalidLevel);
  EXPECT_EQ(refused->opaque, 77u);
  EXPECT_THAT(refused->errorContext(), HasSubstr("timeout 0"));

  ASSERT_TRUE(client.send({.opcode = static_cast<Opcode>(0x94), .opaque = 78}).ok());
  auto unknown = client.readResponse();
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, Status::kUnknownCommand);
  EXPECT_TRUE(client.noop()->ok());
}

TEST(ClientTest, TooBigIsAnsweredThenClosed) {
  FakeServer server;
  Client client = connectTo(server);
  std::string big;
  appendStore(big, Opcode::kSet, 5, 0, "k", std::string(5000, 'x'));
  ASSERT_TRUE(client.sendRaw(big).ok());
  auto answer = client.readResponse();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, Status::kTooBig);
  EXPECT_EQ(answer->opaque, 5u);
  EXPECT_TRUE(client.waitForClose().ok());
}

TEST(ClientTest, BadMagicClosesTheConnection) {
  FakeServer server;
  Client client = connectTo(server);
  ASSERT_TRUE(client.sendRaw("GET / HTTP/1.1\r\n\r\n").ok());
  EXPECT_TRUE(client.waitForClose().ok());
  auto after = client.noop();
  EXPECT_FALSE(after.ok());
  EXPECT_FALSE(client.isOpen());
}

TEST(ClientTest, SilentServerTimesOutInsteadOfHanging) {
  FakeServer server;
  Client client = connectTo(server, 100ms);
  auto version = client.version();  // the fake server never answers VERSION
  ASSERT_FALSE(version.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(version.status())) << version.status();
  EXPECT_FALSE(client.isOpen());
  auto after = client.noop();
  EXPECT_TRUE(absl::IsFailedPrecondition(after.status())) << after.status();
}

TEST(ClientTest, ConnectionRefusedSaysWhere) {
  uint16_t port;
  {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }  // closed: nothing listens there now
  absl::StatusOr<Client> client = Client::connect("127.0.0.1", port, {.timeout = 5'000ms});
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(absl::IsUnavailable(client.status())) << client.status();
  EXPECT_THAT(std::string(client.status().message()),
              HasSubstr("cannot connect to 127.0.0.1:" + std::to_string(port)));
}

TEST(ClientTest, ServerClosingMidRequestIsUnavailable) {
  FakeServer server;
  Client client = connectTo(server);
  ASSERT_TRUE(client.sendRaw("\x01").ok());  // bad magic: the server closes
  auto response = client.readResponse();
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(absl::IsUnavailable(response.status())) << response.status();
}

// syncwrite-cli's run() end to end against the fake server.
struct CliRun {
  int status;
  std::string out;
  std::string err;
};

CliRun runCli(const std::vector<std::string>& argv) {
  absl::StatusOr<cli::CliArgs> args = cli::parseArgs(argv);
  EXPECT_TRUE(args.ok()) << args.status();
  std::ostringstream out, err;
  const int status = cli::run(*args, out, err, 30'000ms);
  return {status, out.str(), err.str()};
}

TEST(CliRunTest, SetGetAndAmbiguous) {
  FakeServer server(/*connections=*/4);
  const std::string port = std::to_string(server.port());
  const CliRun set = runCli({"--port", port, "set", "k", "v"});
  EXPECT_EQ(set.status, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr("stored k (vbucket 98, cas"));

  const CliRun get = runCli({"--port", port, "get", "foo"});
  EXPECT_EQ(get.status, 0) << get.err;
  EXPECT_EQ(get.out, "value-of-foo\n");

  const CliRun missing = runCli({"--port", port, "get", "missing"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err, "not found\n");

  const CliRun durable =
      runCli({"--port", port, "set", "k", "v", "--durability", "majority", "--timeout", "500"});
  EXPECT_EQ(durable.status, 1);
  EXPECT_EQ(durable.err, "ambiguous: durability timeout after 500 ms\n");
}

TEST(CliRunTest, StatsPrintsOneLinePerStat) {
  FakeServer server;
  const CliRun stats = runCli({"--port", std::to_string(server.port()), "stats", "tasks"});
  EXPECT_EQ(stats.status, 0) << stats.err;
  EXPECT_EQ(stats.out, "group tasks\nmode event-driven\n");
}

TEST(CliRunTest, CannotConnect) {
  uint16_t port;
  {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }
  const CliRun run = runCli({"--port", std::to_string(port), "get", "k"});
  EXPECT_EQ(run.status, 3);
  EXPECT_THAT(run.err, HasSubstr("cannot connect to 127.0.0.1:" + std::to_string(port) + ": "));
}

}  // namespace
}  // namespace syncwrite::server::protocol
