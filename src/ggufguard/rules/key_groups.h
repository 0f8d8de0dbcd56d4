// Which metadata keys are the same key, to which reader. Built once per
// validation and shared by the duplicate and collision rules (GG3011,
// GG3012), the KeyIndex through which the semantic rules read metadata, and
// the JSON report's key_collisions.
//
// A header may hold a million keys (the default kv_count limit is 2^20). Hash
// maps of strings cost ~1 us and ~180 bytes per key here (random accesses
// into tables far larger than the caches, an allocation per canonical key);
// this sorts 12-byte (hash, index) records instead (a bucket pass, then each
// bucket in cache): linear in practice, 24 bytes per key, sorted in place
// (docs/performance.md, "Hostile headers").
#ifndef GGUFGUARD_RULES_KEY_GROUPS_H_
#define GGUFGUARD_RULES_KEY_GROUPS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "ggufguard/format/header.h"

namespace ggufguard {

// CanonicalKey(key) (rules.h) without allocating when the key is already in
// normal form (no NUL, no surrounding white space, no capital): `key` itself,
// else the normal form written into *scratch.
std::string_view CanonicalView(std::string_view key, std::string* scratch);

// For n views view_of(0..n-1): first[i] is the first index whose view
// equals view i (i itself when none comes before). The same hash sort as
// KeyGroups, then a sort by bytes within each run of equal hash, so a
// million items cost 16 bytes each while it runs (a hash map of views took
// 52 MB for a million tensor names) and crafted collisions cost O(n log n).
std::vector<uint32_t> FirstOfEqualViews(size_t n, absl::FunctionRef<std::string_view(size_t)> view_of);

class KeyGroups {
 public:
  // `hash` replaces the key hash (absl::Hash) in tests, which give a
  // degenerate one to drive the paths that only colliding hashes reach.
  using KeyHash = uint64_t (*)(std::string_view);
  explicit KeyGroups(const GgufHeader& header, KeyHash hash = nullptr);

  size_t size() const { return first_exact_.size(); }
  // The first KV (file order) whose key has the same bytes as KV i's: i when
  // none comes before it.
  uint32_t FirstExact(size_t i) const { return first_exact_[i]; }
  // The first KV whose CanonicalKey equals KV i's.
  uint32_t FirstCanonical(size_t i) const { return first_canonical_[i]; }
  // For a KV that is first of its canonical group: how many KVs the group has.
  uint32_t CanonicalGroupSize(size_t first) const { return group_size_[first]; }
  // KV indices, in file order, whose canonical key may equal
  // CanonicalKey(name) (same hash): callers compare the keys they need.
  template <typename Visit>
  void ForEachCandidate(std::string_view name, Visit&& visit) const {
    std::string scratch;
    const uint64_t h = Hash(CanonicalView(name, &scratch));
    for (size_t p = LowerBound(h); p < by_canonical_.size() && SameRun(by_canonical_[p].hash(), h); ++p) {
      if (!visit(by_canonical_[p].index)) return;
    }
  }
  // The KVs of canonical group `first`, in file order.
  std::vector<uint32_t> Members(uint32_t first) const;

  // 12 bytes, not 16: the hash is kept as two 32-bit halves, so that a
  // million keys cost 12 MB here (docs/performance.md, "Hostile headers").
  struct Entry {
    uint32_t hash_high;
    uint32_t hash_low;
    uint32_t index;
    static Entry Of(uint64_t hash, uint32_t index) {
      return {static_cast<uint32_t>(hash >> 32), static_cast<uint32_t>(hash), index};
    }
    uint64_t hash() const { return (uint64_t{hash_high} << 32) | hash_low; }
    void set_hash(uint64_t hash) { *this = Of(hash, index); }
  };

 private:
  uint64_t Hash(std::string_view s) const;
  // Records are sorted by the top bits of their hash only (key_groups.cc).
  static bool SameRun(uint64_t a, uint64_t b);
  size_t LowerBound(uint64_t hash) const;

  const GgufHeader& header_;
  KeyHash hash_;
  std::vector<Entry> by_canonical_;  // by (top bits of the canonical hash, index)
  std::vector<uint32_t> first_exact_;
  std::vector<uint32_t> first_canonical_;
  std::vector<uint32_t> group_size_;  // meaningful at each group's first KV
};

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_KEY_GROUPS_H_
