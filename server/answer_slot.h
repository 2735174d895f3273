// AnswerSlot: one request's place in a connection's answer order, taken only
// behind an answer still owed (a pending SyncWrite), in 32 bytes.
//
// A pending SyncWrite holds its slot for as long as it is pending, so the
// slot's size is paid per pending write (issue 23's bound; docs/memory.md).
// It holds no bytes of its own: it is one of
//  - kInline: answered at once; its size() bytes are the next ones in the
//    connection's buffer of answers behind a pending one, which are appended
//    in slot order (Connection::behind_out_);
//  - kPending: a SyncWrite not resolved yet, with its answer's
//    LateAnswerShape packed (shape() unpacks it);
//  - kResolved: resolved; the answer is built when sent (appendResolved());
//  - kOutOfLine: resolved, with an answer that does not fit in the slot (a
//    counter's value besides a CAS, for a durable INCREMENT/DECREMENT): the
//    connection keeps its bytes by the slot's sequence number.
//
// Not thread-safe: a connection's slots live on its I/O thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "durability/sync_write.h"
#include "server/command.h"
#include "server/protocol/opcode.h"

namespace syncwrite::server {

class AnswerSlot {
 public:
  enum class State : uint8_t { kInline, kPending, kResolved, kOutOfLine };

  // Answered at once with `size` bytes, appended to the in-order buffer.
  static AnswerSlot inlineAnswer(size_t size) noexcept;
  static AnswerSlot pending(const LateAnswerShape& shape) noexcept;

  State state() const noexcept { return state_; }
  bool ready() const noexcept { return state_ != State::kPending; }

  // The SyncWrite's shape. Requires kPending, or kResolved (which keeps all
  // of it: a shape with a counter never resolves in the slot).
  LateAnswerShape shape() const noexcept;
  // kPending -> kResolved, true; false (changing nothing) when the answer
  // does not fit: the caller builds its bytes (appendLateAnswer with
  // shape()), keeps them, and calls markOutOfLine() with their size.
  // Requires kPending.
  bool resolve(const durability::Resolution& resolution) noexcept;
  void markOutOfLine(size_t size) noexcept;

  // The answer's size in bytes. Requires ready().
  size_t size() const noexcept;
  // Appends the answer, exactly as appendLateAnswer would have built it.
  // Requires kResolved.
  void appendResolved(std::string& out) const;

 private:
  enum Flag : uint8_t {
    kCommitted = 1,
    kQuiet = 2,
    kHasUuid = 4,
    kZeroCas = 8,
    kJson = 16,
    kHasCounter = 32,
    kXerror = 64,
  };
  durability::Resolution resolution() const noexcept;

  uint64_t vbucket_uuid_ = 0;
  uint64_t cas_or_counter_ = 0;  // kPending: the counter (has_counter); kResolved: the CAS
  uint64_t seqno_or_size_ = 0;   // kResolved: the commit's seqno; kPending with a counter: its
                                 // spec index (LateAnswerShape); else the answer's size
  uint32_t opaque_ = 0;
  protocol::Opcode opcode_ = protocol::Opcode::kSet;
  uint8_t flags_ = 0;
  durability::AmbiguousReason reason_ = durability::AmbiguousReason::kTimeout;
  State state_ = State::kInline;
};
static_assert(sizeof(AnswerSlot) == 32, "AnswerSlot grew: a pending request costs more");

}  // namespace syncwrite::server
