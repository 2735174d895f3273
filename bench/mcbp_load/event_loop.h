// driveConnections: runs the current phase of several connections to its end
// on the calling thread.
//
// One level-triggered epoll set holds every connection's socket: readable
// always, writable while the connection has requests the socket did not take
// (Connection::wantsWrite). Each ready socket gets one Connection::onReady,
// so a thread serves its connections in turn, one recv batch each. The hang
// guard is checked about once a second. This is what lets mcbp_load drive
// hundreds of connections from a few threads (--threads), as a client
// machine's event loop would, instead of one thread each.
#pragma once

#include <span>

#include <absl/status/status.h>

#include "bench/mcbp_load/connection.h"

namespace syncwrite::bench::mcbp_load {

// Each connection must have had its phase started (Connection::startPreload
// or startRun). Returns when every one is done or failed; errors[i] is
// connections[i]'s error (left as it was if none). A connection that fails
// leaves the set; the others go on. errors.size() == connections.size().
void driveConnections(std::span<Connection* const> connections, std::span<absl::Status> errors);

}  // namespace syncwrite::bench::mcbp_load
