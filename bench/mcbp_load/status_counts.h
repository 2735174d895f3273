// StatusCounts: how many responses carried each MCBP status.
//
// The statuses below 0x100 (all those kv_engine defines but a few) are counted
// in a flat array, so add() on the hot path is one increment; higher ones go
// to a map. Not thread-safe: one per connection thread, merged at the end.
#pragma once

#include <array>
#include <cstdint>
#include <map>

namespace syncwrite::bench::mcbp_load {

class StatusCounts {
 public:
  void add(uint16_t status, uint64_t n = 1) {
    if (status < kFlat) {
      flat_[status] += n;
    } else {
      other_[status] += n;
    }
  }

  void add(const StatusCounts& other) {
    for (uint16_t s = 0; s < kFlat; ++s) flat_[s] += other.flat_[s];
    for (const auto& [status, n] : other.other_) other_[status] += n;
  }

  // Every status seen, ascending, with its count.
  std::map<uint16_t, uint64_t> nonZero() const {
    std::map<uint16_t, uint64_t> result = other_;
    for (uint16_t s = 0; s < kFlat; ++s) {
      if (flat_[s] != 0) result[s] = flat_[s];
    }
    return result;
  }

  // Responses whose status is not Success (0x00).
  uint64_t errors() const {
    uint64_t n = 0;
    for (const auto& [status, count] : nonZero()) n += status == 0 ? 0 : count;
    return n;
  }

 private:
  static constexpr uint16_t kFlat = 0x100;
  std::array<uint64_t, kFlat> flat_{};
  std::map<uint16_t, uint64_t> other_;
};

}  // namespace syncwrite::bench::mcbp_load
