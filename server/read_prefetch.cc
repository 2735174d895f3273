#include "server/read_prefetch.h"

#include <array>

#include "server/bucket.h"
#include "server/protocol/opcode.h"
#include "server/protocol/packet.h"
#include "vbucket/vbucket_map.h"

namespace syncwrite::server {
namespace {

// The commands whose handler looks their key up in the vbucket's hash table:
// the reads, and the mutations (a read-modify-write, or a plain write's
// commit), quiet forms included; the sub-document lookups too.
bool looksUpKey(protocol::Opcode opcode) noexcept {
  using protocol::Opcode;
  if (protocol::isMutation(opcode) || protocol::isSubdocSinglePathLookup(opcode) ||
      opcode == Opcode::kSubdocMultiLookup) {
    return true;
  }
  switch (protocol::unquiet(opcode)) {
    case Opcode::kGet:
    case Opcode::kGetK:
    case Opcode::kTouch:
    case Opcode::kGat:
    case Opcode::kGetMeta:
      return true;
    default:
      return false;
  }
}

}  // namespace

size_t collectLookups(std::string_view unread, const Session& session, const ServerContext& server,
                      size_t max_packets, std::span<KeyLookup> out) {
  // The dispatcher will refuse such a session's data commands.
  if (mustAuthenticateFirst(session, server)) return 0;
  const Bucket* bucket = sessionBucket(session, server);
  if (bucket == nullptr) return 0;
  size_t count = 0;
  for (size_t packets = 0;
       packets < max_packets && count < out.size() && unread.size() >= protocol::kHeaderSize;
       ++packets) {
    const protocol::Header header = protocol::decodeHeader(unread);
    const size_t total = protocol::kHeaderSize + size_t{header.body_length};
    if (!header.isRequest() || !header.sectionsFit() || unread.size() < total) break;
    if (looksUpKey(header.opcode)) {
      if (const vbucket::VBucket* vb = bucket->vbuckets().get(header.vbucket())) {
        const size_t key_at =
            protocol::kHeaderSize + header.framing_extras_length + header.extras_length;
        out[count++] = {&vb->hashTable(), unread.substr(key_at, header.key_length)};
      }
    }
    unread.remove_prefix(total);
  }
  return count;
}

void prefetchReads(std::string_view unread, const Session& session, const ServerContext& server,
                   size_t max_packets) {
  std::array<KeyLookup, kMaxPrefetchLookups> lookups;
  const size_t count = collectLookups(unread, session, server, max_packets, lookups);
  // A lone lookup has no other to overlap with: its hints would only repeat
  // its own lookup (1% of the server's CPU at 1 SET in flight).
  if (count < 2) return;
  // One stage over every key before the next: each stage's loads were
  // started by the one before it.
  for (size_t i = 0; i < count; ++i) lookups[i].table->prefetchTable();
  for (size_t i = 0; i < count; ++i) lookups[i].table->prefetchSlot(lookups[i].key);
  for (size_t i = 0; i < count; ++i) lookups[i].table->prefetchItem(lookups[i].key);
}

}  // namespace syncwrite::server
