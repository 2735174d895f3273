// RunLoad: one whole mcbp_load run — the connection threads, the timed
// window, the interval lines and the merged result.
//
// Sequence: check --server-pid can be sampled; open every connection (on its
// thread: connection i on thread i % threads, each thread driving its
// connections with one event loop, event_loop.h), and, with preload, SET
// every key once, the keys split between the connections; when all are ready, start the timed run
// on all of them at once; stop sending at the end of the duration (or when each connection has sent
// its share of --requests: requests / connections, the first requests % connections one more), then
// wait for every answer in flight. elapsed_s runs from the start to the last answer.
#pragma once

#include <functional>

#include <absl/status/statusor.h>

#include "bench/mcbp_load/options.h"
#include "bench/mcbp_load/report.h"

namespace syncwrite::bench::mcbp_load {

// Errors (the run does not happen, or is abandoned before the timed part): a
// connection that cannot be opened or set up (connection.h names host:port and
// the refused step), a preload that fails, a --server-pid that cannot be read.
// A connection failing during the timed run is reported in result.errors.
// `on_interval` is called on the calling thread for each interval line as it
// happens.
absl::StatusOr<LoadResult> runLoad(const LoadOptions& options,
                                   const std::function<void(const Interval&)>& on_interval);

}  // namespace syncwrite::bench::mcbp_load
