// The command families of syncwrite-server: each fills its own entries of the
// dispatcher's table, so adding an opcode touches only its family's file (and
// the protocol layer's parser, which must accept its shape).
//
// Layout after kv_engine's daemon/protocol/mcbp/ (one executor per opcode
// family); the code is our own.
#pragma once

#include "server/command.h"

namespace syncwrite::server::commands {

// SET, ADD, REPLACE, DELETE, INCREMENT, DECREMENT, APPEND, PREPEND and their
// quiet forms: plain writes and SyncWrites (mutation.cc).
void addMutationCommands(CommandTable& table);
// GET, GETK, GETQ, GETKQ, GET_META, TOUCH, GAT (retrieval.cc).
void addRetrievalCommands(CommandTable& table);
// HELLO, SELECT_BUCKET, NOOP, VERSION, QUIT, QUITQ: the connection's own state
// (session.cc).
void addSessionCommands(CommandTable& table);
// STAT, SET_PARAM, SET_VBUCKET, FLUSH, FLUSHQ: what an operator or test harness asks
// (admin.cc).
void addAdminCommands(CommandTable& table);
// DCP_OPEN, DCP_SEQNO_ACKNOWLEDGED, GET_ALL_VB_SEQNOS: an external replica
// (dcp.cc).
void addDcpCommands(CommandTable& table);
// SASL_LIST_MECHS, SASL_AUTH, SASL_STEP (auth.cc).
void addAuthCommands(CommandTable& table);
// GET_CLUSTER_CONFIG, GET_ERROR_MAP (cluster.cc).
void addClusterCommands(CommandTable& table);
// SUBDOC_GET .. SUBDOC_REPLACE_BODY_WITH_XATTR, MULTI_LOOKUP, MULTI_MUTATION:
// the subdoc library's lookups and mutations, stored like any write (subdoc.cc).
void addSubdocCommands(CommandTable& table);

}  // namespace syncwrite::server::commands
