// Connection: one pipelined MCBP load connection, one phase at a time (the
// preload, then the timed run), driven by the event loop of the thread it was
// placed on (event_loop.h; one thread may drive many connections).
//
// open() sets the session up with the protocol library's blocking Client
// (connectToBucket: HELLO, SASL PLAIN, SELECT_BUCKET; or connect only with
// plain_memcached), then takes the socket over (Client::nativeHandle()) and
// drives it with non-blocking send/recv:
//
//   - `depth` requests are in flight at all times: start*() sends the first
//     window in one send; then each onReady() that finds the socket readable
//     reads one batch, parses it, and each complete response frees its slot
//     (the opaque is the slot number, 0..depth-1, so answers may come in any
//     order) and appends one replacement request; the replacements go out
//     with one send per batch. What the socket does not take waits for
//     writable.
//   - A response's latency is from the send call that carried its request to
//     the return of the recv that brought it in (one clock read per batch for
//     each), so it includes the time the response waited in the socket while
//     the previous batch was parsed, and, with many connections on a thread,
//     while the thread served the others.
//   - Error statuses are counted, never fatal. A response that is not one
//     (bad magic) or names no request in flight, a closed connection, or
//     nothing read for the hang guard (30 s plus the durability timeout) with
//     requests in flight ends the connection's phase with an error.
//
// Keys are "key<N>", N uniform in [0, keys); the vbucket of a key is
// Workload::vbucket_of_key[N].
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include "bench/mcbp_load/histogram.h"
#include "bench/mcbp_load/options.h"
#include "bench/mcbp_load/status_counts.h"
#include "server/protocol/client.h"

namespace syncwrite::bench::mcbp_load {

// What every connection shares, read-only: built once before the threads.
struct Workload {
  std::string value;                     // value_size bytes
  std::vector<uint16_t> vbucket_of_key;  // indexed by N of "key<N>"

  // vbucketOfKey("key<N>", vbuckets) for each N (the SDK's CRC-32 hash), or
  // all 0 with plain_memcached. Cost: O(keys).
  static Workload build(const LoadOptions& options);
};

// A request that took longer than --slow-log-us.
struct SlowRequest {
  double answered_unix_s = 0;  // wall clock (system_clock) when its answer was read
  double latency_us = 0;
};

// At most this many slow requests are kept per connection (the first ones).
inline constexpr size_t kSlowLogCap = 10'000;

struct ConnectionStats {
  LatencyHistogram latency;       // nanoseconds, timed run only
  std::vector<SlowRequest> slow;  // timed run only, with --slow-log-us
  StatusCounts statuses;          // timed run only
  StatusCounts preload_statuses;
  uint64_t ops = 0;  // requests answered in the timed run (a quiet batch: all of it at its NOOP)
  // ops as of the last recv batch, for the interval lines read by another
  // thread (relaxed: a progress figure, never a synchronization).
  std::atomic<uint64_t> progress{0};
};

class Connection {
 public:
  // Connects connection number `index` and sets it up. The errors of
  // Client::connect / connectToBucket (they name host:port and the refused
  // step), prefixed with "connection <index>: ".
  static absl::StatusOr<std::unique_ptr<Connection>> open(const LoadOptions& options,
                                                          const Workload& workload, unsigned index);

  // Starts the preload: SETs its share of the keys once each (N = index,
  // index + connections, ...), pipelined like the timed run; statuses go to
  // preload_statuses. The error of the first send.
  absl::Status startPreload();

  // Starts the timed run: sends until `stop` is set or `budget` requests were
  // sent (budget 0: no limit), then waits for every answer in flight. `stop`
  // must outlive the phase. The error of the first send.
  absl::Status startRun(uint64_t budget, const std::atomic<bool>& stop);

  // The socket is readable and/or writable: sends what waits, reads one batch
  // (readable only), handles its answers and sends their replacements. The
  // phase's errors described above; after one the phase is over.
  absl::Status onReady(bool readable, bool writable);

  // The phase is over: nothing in flight and nothing more to send.
  bool done() const noexcept { return outstanding_ == 0 && !more_; }
  // Requests wait for the socket to take them (wait for writable).
  bool wantsWrite() const noexcept { return out_sent_ < out_.size(); }
  int fd() const noexcept { return fd_; }
  // An error if requests are in flight and nothing was read for the hang
  // guard.
  absl::Status checkHang() const;

  ConnectionStats& stats() noexcept { return stats_; }

 private:
  Connection(const LoadOptions& options, const Workload& workload, unsigned index,
             server::protocol::Client client);

  enum class Phase { kPreload, kRun };
  // Fills the slots' state for a phase and sends its first window.
  absl::Status start(Phase phase, bool quiet);
  // Appends the request for slot `opaque` of the current phase; false when
  // there is nothing more to send.
  bool next(std::string& out, uint32_t opaque);
  // next() into slot `slot`, marking it in flight, unless the phase has no
  // more to send.
  void fill(uint32_t slot);
  // Stamps the requests filled since the last send and sends.
  absl::Status sendFresh();
  // Handles the complete responses in in_ read at `now_ns`; keeps a partial one.
  absl::Status handleResponses(int64_t now_ns);
  absl::Status sendSome();
  absl::Status failure(std::string_view what) const;
  // Appends one request of the mix; quiet: its quiet opcode. True if it is a read.
  bool appendRandomRequest(std::string& out, uint32_t opaque, bool quiet);

  // A quiet batch in flight: how many reads and mutations it holds, and how
  // many of each the server answered (the rest were silent: a miss, a success).
  struct QuietBatch {
    uint32_t reads = 0;
    uint32_t mutations = 0;
    uint32_t answered_reads = 0;
    uint32_t answered_mutations = 0;
  };
  // At the batch's NOOP: counts the silent answers by what silence means.
  void finishQuietBatch(QuietBatch& batch, bool timed);
  std::vector<QuietBatch> quiet_batches_;  // by slot, with quiet_batch > 0

  const LoadOptions& options_;
  const Workload& workload_;
  unsigned index_;
  server::protocol::Client client_;  // owns the socket; unused after open()
  int fd_ = -1;
  std::mt19937_64 random_;
  uint64_t next_key_;  // with keys_in_order: the next key's N (before % keys)
  std::string key_;

  std::vector<char> in_;  // recv buffer; [0, in_size_) holds unparsed bytes
  size_t in_size_ = 0;
  std::string out_;  // requests not sent yet: [out_sent_, size)
  size_t out_sent_ = 0;

  // The current phase.
  Phase phase_ = Phase::kPreload;
  bool timed_ = false;                       // kRun: stats_ rather than preload_statuses
  bool quiet_ = false;                       // a slot stays in flight until its NOOP is answered
  bool more_ = false;                        // next() may still have requests
  const std::atomic<bool>* stop_ = nullptr;  // kRun
  uint64_t budget_ = 0;                      // kRun; 0: no limit
  uint64_t sent_ = 0;                        // kRun: requests sent
  uint64_t preload_next_ = 0;                // kPreload: the next key's N
  std::vector<int64_t> sent_ns_;             // by slot
  std::vector<char> in_flight_;              // by slot
  std::vector<uint32_t> fresh_;              // slots filled since the last send
  unsigned outstanding_ = 0;
  int64_t last_read_ns_ = 0;  // the phase's start, then each recv that read bytes

  ConnectionStats stats_;
};

}  // namespace syncwrite::bench::mcbp_load
