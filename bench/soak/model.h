// The soak's model of what the server may hold and may answer (issue 18).
//
// Each key is written by one worker at a time, which sends a batch and reads
// all of its answers before the next, so the order of its writes to a key is
// the order it sent them. A write's answer tells the client one of three
// things (judge()):
//  - applied: Success — a plain write, or a SyncWrite that committed;
//  - refused: an error that changes nothing (NotMyVbucket, KeyExists,
//    SyncWriteInProgress, DurabilityImpossible, ...);
//  - in doubt: SyncWriteAmbiguous, or no answer because the connection was
//    dropped with the write in flight. It may have applied, may still apply
//    later (an ambiguous write that stays tracked commits in order), or never.
// A key refuses any write while a SyncWrite on it is in flight, so a write
// applied after ambiguous ones was executed once they had resolved: it
// overrides them. The key's possible values are therefore the last applied
// write's value plus the values of the in-doubt writes after it (KeyModel).
// A dropped connection's writes are different: until the server has closed
// that connection, it may still execute them, in any order with later writes
// on a new connection. So after an abortive drop (a reset) the worker retires
// the keys of the batch: it never writes or reads them again, and only the
// final check looks at them. After a graceful one it waits for the server to
// close the connection first, and goes on using the keys.
//
// Reads and the final check compare what the server shows against those
// candidates; a status that is not legal for the request is an anomaly too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/protocol/status.h"

namespace syncwrite::bench::soak {

enum class Op : uint8_t { kGet, kSet, kAdd, kReplace, kDelete };

const char* toString(Op op);

enum class Outcome : uint8_t { kApplied, kRefused, kInDoubt };

// A key's value; nullopt: the key is absent.
using Value = std::optional<std::string>;

struct Verdict {
  bool legal = false;  // a status this request may get
  Outcome outcome = Outcome::kRefused;
};

// What `status` means for `op` (durable: it carried a durability level).
Verdict judge(Op op, bool durable, server::protocol::Status status);

class KeyModel {
 public:
  bool mayBeAbsent() const;
  bool mayBePresent() const;
  bool mayHold(const Value& value) const;
  // A write of `value` (nullopt for a delete) with the given outcome.
  void write(const Value& value, Outcome outcome);
  // The candidates, for messages: "absent", "\"v1\"", ...
  std::string describe() const;
  // Written by a request of a dropped connection: not used again.
  bool retired = false;

 private:
  Value applied_;                // the last write known applied (initially: absent)
  std::vector<Value> in_doubt_;  // writes after it that may apply
};

// The precondition a status asserts about the key before the request, as
// the server saw it: e.g. ADD answered KeyExists says the key was present.
// Empty when `model` allows it, else what was wrong.
std::string checkAnswer(Op op, server::protocol::Status status, const Value& read_value,
                        const KeyModel& model);

}  // namespace syncwrite::bench::soak
