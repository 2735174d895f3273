// OpCounters: the requests each I/O thread answered, by opcode and by the
// status of the answer, for metrics (kv_mcbp_ops in docs/metrics.md).
//
// Each I/O thread has a table of its own (bindThisThread() at its start);
// count() adds one to the calling thread's table with a relaxed load and
// store — no read-modify-write, since only that thread writes it — and does
// nothing on a thread with no table. A scrape sums the tables (total()),
// reading each count on its own: a sum read while requests are answered may
// miss those answers, never count one twice.
//
// A status outside protocol::Status's values is counted as kOtherStatus.
// Memory: 256 opcodes × kStatusSlots counts of 8 bytes (64 KiB) per table.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "server/protocol/status.h"

namespace syncwrite::server::metrics {

class OpCounters {
 public:
  static constexpr size_t kStatusSlots = 32;

  // The table count() uses on this thread from now on (null: none). The
  // table must outlive the thread's last count().
  static void bindThisThread(OpCounters* table) noexcept;
  // One answer to `opcode` with `status`, on the calling thread's table.
  static void count(uint8_t opcode, uint16_t status) noexcept;

  struct Total {
    uint8_t opcode = 0;
    std::optional<protocol::Status> status;  // none: a status outside the enum
    uint64_t count = 0;
  };
  // The nonzero counts of `tables` summed, by opcode then status.
  static std::vector<Total> total(const std::vector<const OpCounters*>& tables);

 private:
  std::array<std::array<std::atomic<uint64_t>, kStatusSlots>, 256> counts_{};
};

}  // namespace syncwrite::server::metrics
