// Which metadata keys are the same key, to which reader. Built once per
// validation and shared by the duplicate and collision rules (GG3011,
// GG3012), the KeyIndex through which the semantic rules read metadata, and
// the JSON report's key_collisions.
//
// A header may hold a million keys (the default kv_count limit is 2^20). Hash
// maps of strings cost ~1 us and ~180 bytes per key here (an allocation per
// key); this is one open-addressing table of 4-byte slots over the file's
// own key bytes, keyed by a per-process secret so that no file can make its
// keys collide: one hash and one probe per key, 8 bytes of table a key, and
// 12 more only for keys that share a group with another
// (docs/performance.md, "Hostile headers"). A sort of (hash, index)
// records, its first form, took three times as long.
#ifndef GGUFGUARD_RULES_KEY_GROUPS_H_
#define GGUFGUARD_RULES_KEY_GROUPS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "ggufguard/base/page_buffer.h"
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
  // `hash` replaces the key hash (KeyedHash with the process's secret) in
  // tests, which give a degenerate one to drive the paths that only
  // colliding hashes reach.
  using KeyHash = uint64_t (*)(std::string_view);
  explicit KeyGroups(const GgufHeader& header, KeyHash hash = nullptr);

  size_t size() const { return size_; }
  // Whether some canonical group has two KVs or more (a duplicate or a
  // collision): false for nearly every file, and then every KV is alone and
  // first of its group.
  bool AnyShared() const { return any_shared_; }
  // The first KV (file order) whose key has the same bytes as KV i's: i when
  // none comes before it.
  uint32_t FirstExact(size_t i) const { return Decode(first_exact_[i], i); }
  // The first KV whose CanonicalKey equals KV i's.
  uint32_t FirstCanonical(size_t i) const { return Decode(first_canonical_[i], i); }
  // For a KV that is first of its canonical group: how many KVs the group
  // has (a walk of its members).
  uint32_t CanonicalGroupSize(size_t first) const;
  // The KVs, in file order, whose CanonicalKey equals CanonicalKey(name);
  // `visit` returns false to stop.
  template <typename Visit>
  void ForEachCandidate(std::string_view name, Visit&& visit) const {
    std::string scratch;
    for (uint32_t i = FindGroup(CanonicalView(name, &scratch)); i != kNone; i = Next(i)) {
      if (!visit(i)) return;
    }
  }
  // The KVs of canonical group `first`, in file order.
  std::vector<uint32_t> Members(uint32_t first) const;

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint64_t Hash(std::string_view s) const;
  // The first KV of the group whose canonical key is `canonical`, or kNone.
  uint32_t FindGroup(std::string_view canonical) const;
  // The per-KV arrays hold 0 for the common answer (the KV itself, no next
  // member) and an index + 1 otherwise, so that a key that shares its group
  // with no other writes nothing into them: their fresh pages are never
  // touched, and a million distinct keys cost the table below alone
  // (docs/performance.md, "Hostile headers").
  static uint32_t Decode(uint32_t stored, size_t self) {
    return stored == 0 ? static_cast<uint32_t>(self) : stored - 1;
  }
  uint32_t Next(uint32_t i) const { return next_[i] == 0 ? kNone : next_[i] - 1; }

  const GgufHeader& header_;
  KeyHash hash_;
  uint64_t seed_;
  size_t size_ = 0;
  bool any_shared_ = false;
  // One buffer for the arrays below (huge pages from a few MiB up: a
  // million keys would otherwise fault in 8,000 fresh pages).
  PageBuffer memory_;
  uint32_t* first_exact_ = nullptr;
  uint32_t* first_canonical_ = nullptr;
  uint32_t* next_ = nullptr;  // the next KV of the same canonical group
  // Open addressing over canonical keys, kept for lookups by name: 4 bytes
  // a slot, the KV's index + 1 in the low index_bits_ bits and the top bits
  // of its key's hash above them (a tag: a probe compares keys only when
  // the tags agree). 0 is an empty slot. (Exact keys not in normal form
  // have a table of their own while the groups are built.)
  uint32_t* slots_ = nullptr;
  size_t slot_mask_ = 0;
  int index_bits_ = 0;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_KEY_GROUPS_H_
