#include "server/metrics/op_counters.h"

#include <cstddef>

namespace syncwrite::server::metrics {
namespace {

using protocol::Status;

// protocol::Status's values, each the slot of its index; the last slot is
// every other status.
constexpr Status kKnown[] = {
    Status::kSuccess,
    Status::kKeyNotFound,
    Status::kKeyExists,
    Status::kTooBig,
    Status::kEinval,
    Status::kNotStored,
    Status::kDeltaBadval,
    Status::kNotMyVbucket,
    Status::kNoBucket,
    Status::kAuthError,
    Status::kAuthContinue,
    Status::kRollback,
    Status::kNoAccess,
    Status::kUnknownCommand,
    Status::kEnomem,
    Status::kNotSupported,
    Status::kInternalError,
    Status::kBusy,
    Status::kEtmpfail,
    Status::kDurabilityInvalidLevel,
    Status::kDurabilityImpossible,
    Status::kSyncWriteInProgress,
    Status::kSyncWriteAmbiguous,
    Status::kSyncWriteReCommitInProgress,
};
constexpr size_t kOtherSlot = OpCounters::kStatusSlots - 1;
static_assert(std::size(kKnown) <= kOtherSlot, "more statuses than slots");

// Status values below 0x100 → slot (kOtherSlot for the unknown ones).
constexpr std::array<uint8_t, 256> kSlotOf = [] {
  std::array<uint8_t, 256> slots{};
  slots.fill(static_cast<uint8_t>(kOtherSlot));
  for (size_t i = 0; i < std::size(kKnown); ++i) {
    slots[static_cast<uint16_t>(kKnown[i])] = static_cast<uint8_t>(i);
  }
  return slots;
}();

thread_local OpCounters* this_thread_table = nullptr;

}  // namespace

void OpCounters::bindThisThread(OpCounters* table) noexcept { this_thread_table = table; }

void OpCounters::count(uint8_t opcode, uint16_t status) noexcept {
  OpCounters* table = this_thread_table;
  if (table == nullptr) return;
  const size_t slot = status < kSlotOf.size() ? kSlotOf[status] : kOtherSlot;
  std::atomic<uint64_t>& c = table->counts_[opcode][slot];
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::vector<OpCounters::Total> OpCounters::total(const std::vector<const OpCounters*>& tables) {
  std::vector<Total> out;
  for (size_t op = 0; op < 256; ++op) {
    for (size_t slot = 0; slot < kStatusSlots; ++slot) {
      uint64_t sum = 0;
      for (const OpCounters* t : tables)
        sum += t->counts_[op][slot].load(std::memory_order_relaxed);
      if (sum == 0) continue;
      Total total;
      total.opcode = static_cast<uint8_t>(op);
      total.count = sum;
      if (slot < std::size(kKnown)) total.status = kKnown[slot];
      out.push_back(total);
    }
  }
  return out;
}

}  // namespace syncwrite::server::metrics
