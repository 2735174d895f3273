// The answers every writing family shares (mutation.cc defines them;
// subdoc.cc uses them too): how a durability::WriteStatus is told to the
// client, and the Success answer of a mutation, now or late.
#pragma once

#include <cstdint>
#include <string>

#include "server/command.h"

namespace syncwrite::server::commands {

// A durability::WriteStatus other than kPending as a protocol status.
protocol::Status statusFor(durability::WriteStatus status);

// Answers a write the bucket did not take: NotMyVbucket with the cluster map,
// Etmpfail saying why (memory quota, or a vbucket awaiting its topology), or
// statusFor(status) without a body.
void answerWriteRefused(CommandContext& context, const Bucket& bucket,
                        durability::WriteStatus status);

// The late-answer shape of the request in `context` (LateAnswerShape,
// command.h): its opcode, opaque, and what the session negotiated.
LateAnswerShape shapeFor(const CommandContext& context, const Bucket& bucket);

// The value a Success answer of `shape` carries: nothing, INCREMENT's 8 bytes,
// or a sub-document COUNTER's result (command.h).
std::string counterAnswerValue(const LateAnswerShape& shape);

// Appends the Success answer `shape` describes (nothing when quiet).
void appendSuccess(std::string& out, const LateAnswerShape& shape, uint64_t cas, uint64_t seqno);

}  // namespace syncwrite::server::commands
