#include "server/answer_slot.h"

#include <cassert>

namespace syncwrite::server {

AnswerSlot AnswerSlot::inlineAnswer(size_t size) noexcept {
  AnswerSlot slot;
  slot.seqno_or_size_ = size;
  slot.state_ = State::kInline;
  return slot;
}

AnswerSlot AnswerSlot::pending(const LateAnswerShape& shape) noexcept {
  AnswerSlot slot;
  slot.vbucket_uuid_ = shape.vbucket_uuid;
  slot.cas_or_counter_ = shape.counter;
  slot.opaque_ = shape.opaque;
  slot.opcode_ = shape.opcode;
  slot.flags_ =
      static_cast<uint8_t>((shape.quiet ? kQuiet : 0) | (shape.has_uuid ? kHasUuid : 0) |
                           (shape.zero_cas ? kZeroCas : 0) | (shape.json ? kJson : 0) |
                           (shape.has_counter ? kHasCounter : 0) | (shape.xerror ? kXerror : 0));
  // Unused while pending: a counter's shape never resolves in the slot.
  if (shape.has_counter) slot.seqno_or_size_ = shape.counter_index;
  slot.state_ = State::kPending;
  return slot;
}

LateAnswerShape AnswerSlot::shape() const noexcept {
  assert(state_ == State::kPending || state_ == State::kResolved);
  LateAnswerShape shape;
  shape.vbucket_uuid = vbucket_uuid_;
  shape.opaque = opaque_;
  shape.opcode = opcode_;
  shape.quiet = (flags_ & kQuiet) != 0;
  shape.has_uuid = (flags_ & kHasUuid) != 0;
  shape.zero_cas = (flags_ & kZeroCas) != 0;
  shape.json = (flags_ & kJson) != 0;
  shape.has_counter = (flags_ & kHasCounter) != 0;
  shape.xerror = (flags_ & kXerror) != 0;
  if (shape.has_counter && state_ == State::kPending) {
    shape.counter = cas_or_counter_;
    shape.counter_index = static_cast<uint8_t>(seqno_or_size_);
  }
  return shape;
}

bool AnswerSlot::resolve(const durability::Resolution& resolution) noexcept {
  assert(state_ == State::kPending);
  // A counter and the CAS would both need cas_or_counter_.
  if ((flags_ & kHasCounter) != 0) return false;
  cas_or_counter_ = resolution.cas;
  seqno_or_size_ = resolution.resolution_seqno;
  reason_ = resolution.reason;
  if (resolution.committed) flags_ |= kCommitted;
  state_ = State::kResolved;
  return true;
}

void AnswerSlot::markOutOfLine(size_t size) noexcept {
  assert(state_ == State::kPending);
  seqno_or_size_ = size;
  state_ = State::kOutOfLine;
}

durability::Resolution AnswerSlot::resolution() const noexcept {
  durability::Resolution resolution;
  resolution.committed = (flags_ & kCommitted) != 0;
  resolution.reason = reason_;
  resolution.resolution_seqno = seqno_or_size_;
  resolution.cas = cas_or_counter_;
  return resolution;
}

size_t AnswerSlot::size() const noexcept {
  assert(ready());
  if (state_ == State::kResolved) return lateAnswerSize(shape(), resolution());
  return seqno_or_size_;
}

void AnswerSlot::appendResolved(std::string& out) const {
  assert(state_ == State::kResolved);
  appendLateAnswer(out, shape(), resolution());
}

}  // namespace syncwrite::server
