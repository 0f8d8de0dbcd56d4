#include "ggufguard/rules/key_groups.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "absl/hash/hash.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

using Entry = KeyGroups::Entry;

// Fills `out` with one record per key, sorted by (top 44 bits of the hash,
// index): a pass that counts the keys of each of 2^11 buckets (the hash's
// top 11 bits), a pass that hashes each key again and writes its record
// straight into its bucket, then each bucket (~500 records for a million
// keys: it stays in cache) by std::sort, skipped when already in order.
// Hashing twice costs less than the alternatives measured on the
// million-key benchmarks: a second array of records to scatter into (12 MB
// more at the peak), an in-place permutation (a chain of dependent cache
// misses, ~20% slower), or four LSD radix passes (twice as slow: each
// scatters 12 MB into 2048 places). Records whose hashes differ only below
// the top 44 bits may interleave: callers compare full hashes within a run
// of equal top bits (for a million random hashes, about one pair shares 44
// bits).
constexpr int kLowBits = 20;
constexpr int kBucketBits = 11;
uint64_t Top(uint64_t hash) { return hash >> kLowBits; }

template <typename HashOfKv>
void HashAndSort(size_t n, HashOfKv hash_of_kv, std::vector<Entry>& out) {
  constexpr size_t kBuckets = size_t{1} << kBucketBits;
  auto bucket = [](uint64_t hash) { return static_cast<size_t>(hash >> (64 - kBucketBits)); };
  std::vector<uint32_t> start(kBuckets + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[bucket(hash_of_kv(i)) + 1];
  for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
  out.resize(n);
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (size_t i = 0; i < n; ++i) {  // file order within a bucket
    const uint64_t h = hash_of_kv(i);
    out[next[bucket(h)]++] = Entry::Of(h, static_cast<uint32_t>(i));
  }
  auto less = [](const Entry& a, const Entry& b) {
    return Top(a.hash()) != Top(b.hash()) ? Top(a.hash()) < Top(b.hash()) : a.index < b.index;
  };
  for (size_t b = 0; b < kBuckets; ++b) {
    const auto first = out.begin() + start[b], last = out.begin() + start[b + 1];
    if (!std::is_sorted(first, last, less)) std::sort(first, last, less);
  }
}


// Over `members` in file order (index ascending), all sharing some property:
// sets first[i], for each member i, to the first member whose key equals
// i's under `key_of` (a view, possibly into the scratch string it is given),
// given each member's hash of that key from `hash_of(entry)` (the entry holds
// its canonical hash). Small sets compare
// keys with the few distinct keys seen so far; a larger one with many
// distinct keys is sorted by (hash, index) first, so the work stays
// O(m log m) whatever the input, even one built to collide hashes.
template <typename HashOf, typename KeyOf>
void FirstOfEqualKeys(std::vector<Entry>& members, HashOf hash_of, KeyOf key_of, std::vector<uint32_t>& first) {
  constexpr size_t kLinearLeaders = 8;
  std::string scratch_a, scratch_b;
  std::vector<Entry> leaders;  // the first member of each distinct key so far
  // One pass with up to kLinearLeaders distinct keys; false when exceeded.
  auto linear = [&](size_t begin, size_t end) {
    leaders.clear();
    for (size_t p = begin; p < end; ++p) {
      const Entry& m = members[p];
      const std::string_view k = key_of(m.index, &scratch_a);
      uint32_t found = m.index;
      for (const Entry& l : leaders) {
        if (l.hash() == m.hash() && key_of(l.index, &scratch_b) == k) {
          found = l.index;
          break;
        }
      }
      if (found == m.index) {
        if (leaders.size() == kLinearLeaders) return false;
        leaders.push_back(m);
      }
      first[m.index] = found;
    }
    return true;
  };
  for (Entry& e : members) e.set_hash(hash_of(e));
  if (linear(0, members.size())) return;
  std::stable_sort(members.begin(), members.end(), [](const Entry& a, const Entry& b) { return a.hash() < b.hash(); });
  for (size_t begin = 0; begin < members.size();) {
    size_t end = begin + 1;
    while (end < members.size() && members[end].hash() == members[begin].hash()) ++end;
    if (!linear(begin, end)) {
      // Many distinct keys with one 64-bit hash: only a hash-flooding file
      // does that. Sort those by key bytes; equal keys become adjacent, in
      // file order (the sort is stable).
      std::stable_sort(members.begin() + static_cast<long>(begin), members.begin() + static_cast<long>(end),
                       [&](const Entry& a, const Entry& b) {
                         std::string sa, sb;
                         return key_of(a.index, &sa) < key_of(b.index, &sb);
                       });
      std::string sa, sb;
      for (size_t p = begin; p < end; ++p) {
        const uint32_t i = members[p].index;
        first[i] = (p > begin && key_of(i, &sa) == key_of(members[p - 1].index, &sb)) ? first[members[p - 1].index] : i;
      }
    }
    begin = end;
  }
}

// Eight bytes at a time: the high bit of each byte of the result is set
// where that byte of `v` is 'A'..'Z' (exact for every byte value: the low
// seven bits are tested, then bytes with the high bit set are dropped; no
// carry crosses a byte, since 0x7f + 0x3f < 0x100).
uint64_t CapitalBytes(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const uint64_t low7 = v & ~kHigh;
  const uint64_t at_least_a = low7 + kOnes * (0x80 - 'A');
  const uint64_t above_z = low7 + kOnes * (0x80 - 'Z' - 1);
  return at_least_a & ~above_z & ~v & kHigh;
}

// The lowest set high bit marks the first zero byte of `v` exactly (bits
// above it may be false positives, from the borrow).
uint64_t ZeroBytes(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  return (v - kOnes) & ~v & kHigh;
}

}  // namespace

std::vector<uint32_t> FirstOfEqualViews(size_t n, absl::FunctionRef<std::string_view(size_t)> view_of) {
  std::vector<Entry> sorted;
  HashAndSort(n, [&](size_t i) { return absl::Hash<std::string_view>{}(view_of(i)); }, sorted);
  std::vector<uint32_t> first(n);
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && Top(sorted[end].hash()) == Top(sorted[begin].hash())) ++end;
    // A run is in file order; sorting it stably by bytes makes equal views
    // adjacent with the earliest first.
    if (end - begin > 1) {
      std::stable_sort(sorted.begin() + static_cast<long>(begin), sorted.begin() + static_cast<long>(end),
                       [&](const Entry& a, const Entry& b) { return view_of(a.index) < view_of(b.index); });
    }
    for (size_t p = begin; p < end; ++p) {
      const uint32_t i = sorted[p].index;
      const bool repeat = p > begin && view_of(i) == view_of(sorted[p - 1].index);
      first[i] = repeat ? first[sorted[p - 1].index] : i;
    }
    begin = end;
  }
  return first;
}

std::string_view CanonicalView(std::string_view key, std::string* scratch) {
  // One pass for NUL and capitals, a word at a time (on the million-key
  // benchmarks a byte loop here was ~10% of all the time, and a memchr call
  // per short key cost more than the byte loop).
  size_t n = key.size();
  bool capitals = false;
  size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      uint64_t v;
      std::memcpy(&v, key.data() + i, 8);
      const uint64_t capital = CapitalBytes(v), zero = ZeroBytes(v);
      if (zero != 0) {
        const int at = std::countr_zero(zero) / 8;  // the first NUL
        capitals |= (capital & ((uint64_t{1} << (8 * at)) - 1)) != 0;
        n = i + static_cast<size_t>(at);
        i = n;
        break;
      }
      capitals |= capital != 0;
    }
  }
  for (; i < n; ++i) {
    const char c = key[i];
    if (c == '\0') {
      n = i;
      break;
    }
    capitals |= (c >= 'A' && c <= 'Z');
  }
  key = key.substr(0, n);
  while (!key.empty() && IsSpace(key.front())) key.remove_prefix(1);
  while (!key.empty() && IsSpace(key.back())) key.remove_suffix(1);
  if (!capitals) return key;
  scratch->assign(key);
  for (char& c : *scratch) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return *scratch;
}

std::string CanonicalKey(std::string_view key) {
  std::string scratch;
  return std::string(CanonicalView(key, &scratch));
}

uint64_t KeyGroups::Hash(std::string_view s) const {
  return hash_ != nullptr ? hash_(s) : absl::Hash<std::string_view>{}(s);
}

// Exact duplicates are keys of one canonical group, so one sort by canonical
// hash serves both: a run of equal hash (almost always one key) is split
// into canonical groups, and each group into exact keys. A key already in
// normal form (nearly every key) is hashed only by the sort (twice, see
// HashAndSort): its exact hash is its canonical hash.
KeyGroups::KeyGroups(const GgufHeader& header, KeyHash hash) : header_(header), hash_(hash) {
  const size_t n = header.kvs.size();
  first_exact_.resize(n);
  first_canonical_.resize(n);
  group_size_.resize(n);
  std::string scratch;
  HashAndSort(
      n, [&](size_t i) { return Hash(CanonicalView(header.kvs[i].key(), &scratch)); }, by_canonical_);

  auto canonical_hash = [](const Entry& e) { return e.hash(); };
  auto canonical_key = [&](uint32_t i, std::string* s) { return CanonicalView(header.kvs[i].key(), s); };
  auto exact_hash = [&](const Entry& e) { return Hash(header.kvs[e.index].key()); };
  auto exact_key = [&](uint32_t i, std::string*) { return header.kvs[i].key(); };
  std::vector<Entry> run, group;
  std::string scratch_a, scratch_b;
  // A key in normal form equals, byte for byte, every other key in normal
  // form of its canonical group: only the others need comparing.
  auto in_normal_form = [&](uint32_t i) {
    const std::string_view key = header.kvs[i].key();
    const std::string_view canonical = CanonicalView(key, &scratch_a);
    return canonical.data() == key.data() && canonical.size() == key.size();
  };
  // Splits one canonical group (file order) into exact keys.
  auto split_exact = [&](const Entry* begin, const Entry* end) {
    uint32_t first_normal = UINT32_MAX;
    group.clear();
    for (const Entry* e = begin; e != end; ++e) {
      if (!in_normal_form(e->index)) {
        group.push_back(*e);
        continue;
      }
      if (first_normal == UINT32_MAX) first_normal = e->index;
      first_exact_[e->index] = first_normal;
    }
    if (group.size() == 1) first_exact_[group[0].index] = group[0].index;
    if (group.size() > 1) FirstOfEqualKeys(group, exact_hash, exact_key, first_exact_);
    group_size_[first_canonical_[begin->index]] = static_cast<uint32_t>(end - begin);
  };
  for (size_t begin = 0; begin < n;) {
    size_t end = begin + 1;
    while (end < n && Top(by_canonical_[end].hash()) == Top(by_canonical_[begin].hash())) ++end;
    const Entry* const b = &by_canonical_[begin];
    const Entry* const e = b + (end - begin);
    begin = end;
    if (e - b == 1) {  // a key of its own: nothing to compare
      first_exact_[b->index] = first_canonical_[b->index] = b->index;
      group_size_[b->index] = 1;
      continue;
    }
    // Usually a run is one canonical key (the same key repeated, or its
    // variants): checked in place, without copies.
    const std::string_view first_key = CanonicalView(header.kvs[b->index].key(), &scratch_b);
    bool one_key = true;
    for (const Entry* m = b; m != e && one_key; ++m) {
      one_key = m->hash() == b->hash() && CanonicalView(header.kvs[m->index].key(), &scratch_a) == first_key;
    }
    if (one_key) {
      for (const Entry* m = b; m != e; ++m) first_canonical_[m->index] = b->index;
      split_exact(b, e);
      continue;
    }
    run.assign(b, e);
    FirstOfEqualKeys(run, canonical_hash, canonical_key, first_canonical_);
    // Each canonical group of the run, in file order. The run is in file
    // order; groups interleave only when distinct canonical keys share the
    // hash's top bits.
    std::sort(run.begin(), run.end(), [&](const Entry& x, const Entry& y) {
      const uint32_t fx = first_canonical_[x.index], fy = first_canonical_[y.index];
      return fx != fy ? fx < fy : x.index < y.index;
    });
    for (size_t g = 0; g < run.size();) {
      size_t h = g + 1;
      while (h < run.size() && first_canonical_[run[h].index] == first_canonical_[run[g].index]) ++h;
      split_exact(run.data() + g, run.data() + h);
      g = h;
    }
  }
}

size_t KeyGroups::LowerBound(uint64_t hash) const {
  return std::lower_bound(by_canonical_.begin(), by_canonical_.end(), Top(hash),
                          [](const Entry& e, uint64_t top) { return Top(e.hash()) < top; }) -
         by_canonical_.begin();
}

std::vector<uint32_t> KeyGroups::Members(uint32_t first) const {
  std::vector<uint32_t> out;
  std::string scratch;
  const uint64_t top = Top(Hash(CanonicalView(header_.kvs[first].key(), &scratch)));
  for (size_t p = LowerBound(top << kLowBits); p < by_canonical_.size() && Top(by_canonical_[p].hash()) == top; ++p) {
    if (first_canonical_[by_canonical_[p].index] == first) out.push_back(by_canonical_[p].index);
  }
  return out;
}

bool KeyGroups::SameRun(uint64_t a, uint64_t b) { return Top(a) == Top(b); }

}  // namespace ggufguard
