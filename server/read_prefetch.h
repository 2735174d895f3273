// Read prefetch: before a connection executes the requests a read brought,
// start loading the hash-table memory their keys will be looked up in, so
// that the cache misses of a pipeline overlap instead of each lookup waiting
// for its own.
//
// It changes nothing and answers nothing: it only issues prefetches (through
// HashTable's prefetch hints) for the first `max_packets` complete packets in
// `unread`, when two or more of them look their key up in the hash table (the
// GET, SET/ADD/REPLACE, DELETE, INCR/DECR, APPEND/PREPEND, TOUCH/GAT and
// GET_META families), in the vbucket of the bucket the session works in. It
// stops at the first incomplete or malformed packet; the dispatcher still
// validates and checks (bucket access, vbucket state) every request.
//
// Why: a pipelined GET's largest cost was the miss on the stored item when
// its key is compared (docs/benchmarks.md, "Prefetching a turn's keys").
// Called on the connection's I/O thread, once per turn.
#pragma once

#include <cstddef>
#include <string_view>

#include "server/command.h"
#include "server/server_context.h"

namespace syncwrite::server {

void prefetchReads(std::string_view unread, const Session& session, const ServerContext& server,
                   size_t max_packets);

}  // namespace syncwrite::server
