// The answers a client that did not negotiate XERROR (HELLO feature 0x07) is
// sent: kv_engine's rule (protocol::statusWithoutXerror, after its
// Connection::remapErrorCode) applied to answers already encoded.
//
// The dispatcher and the connection apply it once per request, to what that
// request appended, so no handler needs to know whether its client speaks
// XERROR. Plain memcached clients (libmemcached, memcapable) never negotiate
// it.
#pragma once

#include <cstddef>
#include <string>

namespace syncwrite::server {

// Rewrites, in place, the status of each response in out[from, end) to the one
// a client without XERROR is told. Returns false when one of them is a status
// such a client is not sent at all: `out` is then cut back to `from`, and the
// caller closes the connection without that answer. Requires out[from, end)
// to be whole responses. Costs two bytes read per response; nothing moves.
bool remapForClientWithoutXerror(std::string& out, size_t from);

}  // namespace syncwrite::server
