// Read prefetch: before a connection executes the requests a read brought,
// start loading the hash-table memory their keys will be looked up in, so
// that the cache misses of a pipeline overlap instead of each lookup waiting
// for its own.
//
// collectLookups() reads the headers of the first `max_packets` complete
// packets in `unread` and returns, in order, (table, key) for each whose
// command looks its key up in the hash table (the GET, SET/ADD/REPLACE,
// DELETE, INCR/DECR, APPEND/PREPEND, TOUCH/GAT and GET_META families) in a
// vbucket that exists in the bucket the session works in: none when there is
// no such bucket, or when the server has users and the session has not
// authenticated (the dispatcher will refuse it). It stops at the first
// incomplete packet or one whose sections do not fit its body; a packet the
// connection will refuse for another reason (its size, its contents) may
// still be collected. The keys point into `unread`.
//
// prefetchReads() collects, and when two or more lookups were found issues
// HashTable's prefetch hints for them, in three stages each over every key
// before the next (a lone lookup has nothing to overlap with). It changes
// nothing and answers nothing; the dispatcher still validates and checks
// every request.
//
// Why: a pipelined GET's largest cost was the miss on the stored item when
// its key is compared (docs/benchmarks.md, "Prefetching a turn's keys").
// Connection calls prefetchReads() on its I/O thread at the start of each
// turn.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "server/command.h"
#include "server/server_context.h"
#include "vbucket/hash_table.h"

namespace syncwrite::server {

struct KeyLookup {
  const vbucket::HashTable* table = nullptr;
  std::string_view key;
};

// At most this many lookups are collected (more than a turn executes:
// Connection::kRequestsPerTurn).
inline constexpr size_t kMaxPrefetchLookups = 32;

// Fills `out` from its start; returns how many it filled (at most out.size()).
size_t collectLookups(std::string_view unread, const Session& session, const ServerContext& server,
                      size_t max_packets, std::span<KeyLookup> out);

void prefetchReads(std::string_view unread, const Session& session, const ServerContext& server,
                   size_t max_packets);

}  // namespace syncwrite::server
