// base::HandlerMemory with boost.asio: a post or a socket operation takes the
// block while it is queued, a chain of them (each handler starting the next,
// as a connection's reads do) reuses it without the heap, and an operation
// that finds it taken, or does not fit, goes to the heap and still runs.
#include <array>
#include <cstddef>
#include <functional>
#include <memory>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "base/handler_memory.h"

namespace syncwrite::base {
namespace {

TEST(HandlerMemory, AQueuedPostHoldsTheBlockSoASecondOneGoesToTheHeap) {
  boost::asio::io_context io;
  HandlerMemory memory;
  int ran = 0;
  boost::asio::post(io, withMemory(memory, [&] { ++ran; }));
  EXPECT_EQ(memory.heapAllocations(), 0u);
  boost::asio::post(io, withMemory(memory, [&] { ++ran; }));
  EXPECT_EQ(memory.heapAllocations(), 1u) << "the first post holds the block";
  io.run();
  EXPECT_EQ(ran, 2);
}

TEST(HandlerMemory, AChainOfPostsReusesTheBlock) {
  boost::asio::io_context io;
  HandlerMemory memory;
  int left = 1000;
  std::function<void()> next = [&] {
    if (--left > 0) boost::asio::post(io, withMemory(memory, next));
  };
  boost::asio::post(io, withMemory(memory, next));
  io.run();
  EXPECT_EQ(left, 0);
  EXPECT_EQ(memory.heapAllocations(), 0u) << "each post freed the block before its handler ran";
}

TEST(HandlerMemory, ASharedMemoryOutlivesItsOwnerWhileAPostIsQueued) {
  auto io = std::make_unique<boost::asio::io_context>();
  auto memory = std::make_shared<HandlerMemory>();
  bool ran = false;
  boost::asio::post(*io, withMemory(memory, [&] { ran = true; }));
  std::weak_ptr<HandlerMemory> watch = memory;
  memory.reset();  // the owner goes; the queued post keeps the memory
  EXPECT_FALSE(watch.expired());
  io.reset();  // destroys the post unrun, then frees its memory
  EXPECT_FALSE(ran);
  EXPECT_TRUE(watch.expired());
}

TEST(HandlerMemory, TooBigAHandlerGoesToTheHeap) {
  boost::asio::io_context io;
  HandlerMemory memory;
  std::array<std::byte, HandlerMemory::kBytes> payload{};
  payload[0] = std::byte{7};
  int seen = 0;
  boost::asio::post(io,
                    withMemory(memory, [&seen, payload] { seen = static_cast<int>(payload[0]); }));
  EXPECT_EQ(memory.heapAllocations(), 1u);
  io.run();
  EXPECT_EQ(seen, 7);
}

// A connection's pattern: one read at a time, the next started by the
// handler of the last.
TEST(HandlerMemory, ASocketsReadsReuseTheBlock) {
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket reader(io);
  boost::asio::local::stream_protocol::socket writer(io);
  boost::asio::local::connect_pair(reader, writer);
  HandlerMemory memory;
  std::array<char, 64> buffer{};
  size_t received = 0;
  constexpr size_t kMessages = 200;
  std::function<void(const boost::system::error_code&, size_t)> on_read =
      [&](const boost::system::error_code& error, size_t bytes) {
        ASSERT_FALSE(error) << error.message();
        received += bytes;
        if (received < kMessages) {
          reader.async_read_some(boost::asio::buffer(buffer), withMemory(memory, on_read));
        }
      };
  reader.async_read_some(boost::asio::buffer(buffer), withMemory(memory, on_read));
  boost::asio::post(io, withMemory(memory, [] {}));
  EXPECT_EQ(memory.heapAllocations(), 1u) << "the queued read holds the block";
  for (size_t i = 0; i < kMessages; ++i) {
    boost::asio::write(writer, boost::asio::buffer("x", 1));
    io.run_one();
  }
  io.run();
  EXPECT_EQ(received, kMessages);
  EXPECT_EQ(memory.heapAllocations(), 1u) << "no read after the first went to the heap";
}

}  // namespace
}  // namespace syncwrite::base
