// Worker: one client connection of the soak (issue 18), on a thread of its
// own, writing and reading its own keys.
//
// Each turn sends a batch of 1..12 requests on distinct keys — GET, SET, ADD,
// REPLACE, DELETE; half the writes durable, at a random level and a timeout of
// 20..1500 ms — then reads every answer before the next batch, checking that
// they come once each, in request order (the connection is ordered), with a
// status legal for the request, consistent with the key's model (model.h),
// and that no SyncWrite is answered ambiguous before its timeout (measured
// from the send, which precedes the server's receipt). requestDrop() makes the
// next batch end with the connection closed as soon as it is sent, and the
// worker reconnect. The requests are in doubt. Half the drops close
// abortively (a reset) and retire the keys, since the server may still
// execute those requests later; the others send an end of stream and wait
// for the server to close, after which it executes nothing more of them, so
// the keys stay in use (model.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/soak/model.h"
#include "bench/soak/tally.h"
#include "server/protocol/client.h"

namespace syncwrite::bench::soak {

class Worker {
 public:
  Worker(int index, uint16_t port, int keys, int vbuckets, uint64_t seed, Tally& tally,
         Anomalies& anomalies);

  // The thread's body: batches until `stop`, then closes the connection.
  void run(const std::atomic<bool>& stop);
  // Any thread: the next batch is abandoned once sent (see above).
  void requestDrop() { drop_.store(true); }

  // After run(): every key's value, read through `reader`, must be one its
  // model allows. The vbuckets must be active and no SyncWrite in flight.
  void checkFinal(server::protocol::Client& reader);

 private:
  struct Request {
    Op op = Op::kGet;
    int key = 0;
    Value value;  // what a write writes (nullopt: delete)
    bool durable = false;
    uint16_t timeout_ms = 0;
    uint32_t opaque = 0;
  };

  std::string keyName(int key) const;
  uint16_t vbucketOf(int key) const;
  bool connect();
  void batch();
  // A request that gets no answer: counted, and a write is in doubt.
  void unanswered(const Request& request);
  // The requests from `first` on get no answer: in doubt, keys retired.
  void abandon(const std::vector<Request>& requests, size_t first);
  // End of stream, then wait for the server to close: in doubt, keys kept.
  void dropGracefully(const std::vector<Request>& requests);
  void check(const Request& request, const server::protocol::Response& response,
             std::chrono::steady_clock::duration waited);

  const int index_;
  const uint16_t port_;
  const int vbuckets_;
  Tally& tally_;
  Anomalies& anomalies_;
  std::mt19937_64 random_;
  std::vector<KeyModel> keys_;
  uint64_t written_ = 0;  // for unique values
  size_t retired_ = 0;    // keys retired
  std::optional<server::protocol::Client> client_;
  std::atomic<bool> drop_{false};
};

}  // namespace syncwrite::bench::soak
