#include "ggufguard/base/hash_screen.h"

#include <algorithm>
#include <cstring>

namespace ggufguard {
namespace {

// A probe that walks this many taken slots answers "may repeat": hashes
// crafted to crowd a slot cost a bounded walk each, then the caller's
// exact comparison, never quadratic time.
constexpr size_t kMaxProbe = 32;

// One table for every partition, never cleared between them: a slot holds
// (partition + 1) << 32 | tag, and a slot stamped with another partition
// reads as empty. Linear probing at a load of at most 1/4 (a partition
// holds at most a quarter of the table's slots), so the probe loop rarely
// runs twice: at a load of 3/8 a third of the inserts met a taken slot and
// left the loop by a mispredicted branch.
class StampedTable {
 public:
  StampedTable(uint64_t* slots, size_t count) : slots_(slots), mask_(count - 1) {
    while ((size_t{1} << bits_) < count) ++bits_;
    std::memset(slots_, 0, count * sizeof(uint64_t));
  }
  static size_t SlotsFor(size_t largest_partition) {
    size_t slots = 64;
    while (slots < 4 * largest_partition) slots *= 2;
    return slots;
  }
  // True when one of the partition's tags repeats (or a probe is too long).
  bool PartitionMayRepeat(const uint32_t* tags, size_t n, size_t partition) const {
    const uint64_t stamp = uint64_t{partition + 1} << 32;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t entry = stamp | tags[i];
      size_t slot = tags[i] >> (32 - bits_);
      for (size_t probe = 0; (slots_[slot] & ~uint64_t{UINT32_MAX}) == stamp; ++probe, slot = (slot + 1) & mask_) {
        if (slots_[slot] == entry || probe == kMaxProbe) return true;
      }
      slots_[slot] = entry;
    }
    return false;
  }

 private:
  uint64_t* slots_;
  size_t mask_;
  int bits_ = 0;
};

}  // namespace

HashScreen::HashScreen(size_t count)
    // Twice what random hashes put in a partition on average, and a margin.
    : capacity_(count / (kPartitions / 2) + 64),
      // Partition p starts at p * stride: a cache line more than the
      // capacity, so that the 256 lines being written at a time fall in
      // different cache sets (at a power-of-two stride they shared two sets
      // of L1, and every store missed).
      stride_((capacity_ + 15) / 16 * 16 + 16),
      table_slots_(StampedTable::SlotsFor(capacity_)),
      // The table, then the partitions: bounded by the hash count, which the
      // caller's input bounds.
      memory_(table_slots_ * sizeof(uint64_t) + kPartitions * stride_ * sizeof(uint32_t)),
      tags_(reinterpret_cast<uint32_t*>(memory_.data() + table_slots_ * sizeof(uint64_t))) {}

bool HashScreen::MayRepeat() const {
  if (*std::max_element(filled_.begin(), filled_.end()) > capacity_) return true;  // crowded: crafted
  const StampedTable table(reinterpret_cast<uint64_t*>(memory_.data()), table_slots_);
  for (size_t p = 0; p < kPartitions; ++p) {
    if (table.PartitionMayRepeat(tags_ + p * stride_, filled_[p], p)) return true;
  }
  return false;
}

}  // namespace ggufguard
