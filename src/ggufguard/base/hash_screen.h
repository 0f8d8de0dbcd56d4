// Whether any two of many 64-bit hashes may be equal, in time linear in
// their number and without a table larger than the caches.
//
// GG9054 (duplicate tokens) asks this of every vocabulary: 49,152 hashes
// for SmolLM2, 256,000 for Gemma. One table of a few slots per hash is
// larger than L2 for such a vocabulary, and its random probes were most of
// a validation's time (docs/performance.md, "Cost of each rule"). The
// screen instead files each hash's next 32 bits into one of 256 partitions
// by its top 8 bits as it is added (a store into one of 256 streams), then
// screens each partition, a few hundred tags, in a table that stays in L1.
#ifndef GGUFGUARD_BASE_HASH_SCREEN_H_
#define GGUFGUARD_BASE_HASH_SCREEN_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "ggufguard/base/page_buffer.h"

namespace ggufguard {

class HashScreen {
 public:
  static constexpr int kPartitionBits = 8;
  static constexpr size_t kPartitions = size_t{1} << kPartitionBits;

  // Room for `count` hashes: memory of about 8 bytes a hash (partitions of
  // twice the mean size), kept by the thread for its next screen.
  explicit HashScreen(size_t count);

  void Add(uint64_t h) {
    const size_t p = static_cast<size_t>(h >> (64 - kPartitionBits));
    // Past a partition's capacity its last tag is overwritten; MayRepeat
    // then answers "may repeat".
    tags_[p * stride_ + std::min<size_t>(filled_[p]++, capacity_ - 1)] = static_cast<uint32_t>(h >> (32 - kPartitionBits));
  }

  // False when every pair of the hashes added differs in its top 40 bits;
  // true when some pair may be equal: equal in those bits, or (hashes
  // crafted to crowd a partition or a slot) a partition past its capacity
  // or a probe longer than a bound. A caller that must be exact compares its
  // items only on true, which for distinct random hashes happens with
  // probability about n^2 / 2^41 (0.1% for 49,152 hashes).
  bool MayRepeat() const;

 private:
  size_t capacity_;
  size_t stride_;
  size_t table_slots_;
  ReusedBuffer memory_;
  uint32_t* tags_;
  std::array<uint32_t, kPartitions> filled_{};
};

// The screen over a list of hashes.
inline bool HashesMayRepeat(absl::Span<const uint64_t> hashes) {
  HashScreen screen(hashes.size());
  for (uint64_t h : hashes) screen.Add(h);
  return screen.MayRepeat();
}

}  // namespace ggufguard

#endif  // GGUFGUARD_BASE_HASH_SCREEN_H_
