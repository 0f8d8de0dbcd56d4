#include "ggufguard/rules/key_groups.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "absl/hash/hash.h"
#include "ggufguard/base/text_hash.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// A key's hash and index, 12 bytes: the hash kept as two 32-bit halves, so
// that a million items cost 12 MB here.
struct Entry {
  uint32_t hash_high;
  uint32_t hash_low;
  uint32_t index;
  static Entry Of(uint64_t hash, uint32_t index) {
    return {static_cast<uint32_t>(hash >> 32), static_cast<uint32_t>(hash), index};
  }
  uint64_t hash() const { return (uint64_t{hash_high} << 32) | hash_low; }
};

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

uint64_t KeyGroups::Hash(std::string_view s) const { return hash_ != nullptr ? hash_(s) : KeyedHash(s, seed_); }

namespace {

// A slot: the hash's top 31 bits and a kind bit above the KV's index + 1;
// 0 is an empty slot.
constexpr uint64_t kExactKind = uint64_t{1} << 32;
uint64_t SlotTag(uint64_t hash, bool exact) { return ((hash >> 33) << 33) | (exact ? kExactKind : 0); }
constexpr uint64_t kTagMask = ~uint64_t{UINT32_MAX};
uint32_t SlotIndex(uint64_t slot) { return static_cast<uint32_t>(slot) - 1; }

bool InNormalForm(std::string_view key, std::string_view canonical) {
  return canonical.data() == key.data() && canonical.size() == key.size();
}

}  // namespace

// One pass in file order. Each key's canonical form is looked up in the
// table (a hash and, on a tag match, a comparison of canonical keys); a new
// one starts a group, a known one joins it at the end of its member chain.
// Exact duplicates are keys of one canonical group: a key in normal form
// equals, byte for byte, exactly the other keys in normal form of its group
// (the group's first such key is its first exact copy); a key not in
// normal form (a NUL, surrounding white space, a capital: rare in real
// files) is looked up again by its own bytes, in the same table under the
// other kind bit.
KeyGroups::KeyGroups(const GgufHeader& header, KeyHash hash)
    : header_(header), hash_(hash), seed_(hash == nullptr ? ProcessHashSeed() : 0), size_(header.kvs.size()) {
  const size_t n = size_;
  if (n == 0) return;
  std::string other;  // a canonical form that is not the key itself
  // At most half full with one canonical entry a key; exact entries (keys
  // not in normal form) go into a second table of the same shape, made on
  // the first such key, for the keys left from there.
  size_t slots = 16;
  while (slots < 2 * n) slots *= 2;
  slot_mask_ = slots - 1;
  // Four arrays kept, two used while building (each group's last member and
  // first key in normal form), and the slots; bounded by the KV count,
  // which the parser bounded by the header's bytes (13 or more a KV).
  memory_ = PageBuffer::Zeroed(6 * n * sizeof(uint32_t) + slots * sizeof(uint64_t));
  slots_ = reinterpret_cast<uint64_t*>(memory_.data());
  uint32_t* arrays = reinterpret_cast<uint32_t*>(slots_ + slots);
  first_exact_ = arrays;
  first_canonical_ = arrays + n;
  group_size_ = arrays + 2 * n;
  next_ = arrays + 3 * n;
  uint32_t* const last_member = arrays + 4 * n;
  uint32_t* const first_normal = arrays + 5 * n;
  PageBuffer exact_memory;
  uint64_t* exact_slots = nullptr;
  size_t exact_mask = 0;

  // The slot of `wanted`'s entry of that kind, or the empty slot where it
  // goes; `same(j)` compares KV j's key with the one looked up.
  auto probe = [](uint64_t* table, size_t mask, uint64_t h, bool exact, auto&& same) -> uint64_t* {
    const uint64_t tag = SlotTag(h, exact);
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      uint64_t& slot = table[s];
      if (slot == 0 || ((slot & kTagMask) == tag && same(SlotIndex(slot)))) return &slot;
    }
  };
  // The table is larger than the caches for a large header, and a probe is
  // a cache miss: each key's canonical form and hash are computed
  // kAhead keys before it is entered, and its home slot prefetched.
  constexpr uint32_t kAhead = 16;
  struct Pending {
    std::string_view canonical;
    uint64_t hash;
    bool normal;
    std::string scratch;  // the canonical form when it is not the key itself
  };
  std::array<Pending, kAhead> ahead;
  auto prepare = [&](uint32_t i) {
    Pending& p = ahead[i % kAhead];
    const std::string_view key = header.kvs[i].key();
    p.canonical = CanonicalView(key, &p.scratch);
    p.normal = InNormalForm(key, p.canonical);
    p.hash = Hash(p.canonical);
    __builtin_prefetch(&slots_[p.hash & slot_mask_]);
  };
  auto enter = [&](uint32_t i, const Pending& p) {
    const std::string_view key = header.kvs[i].key();
    next_[i] = kNone;
    uint64_t* slot = probe(slots_, slot_mask_, p.hash, false,
                           [&](uint32_t j) { return CanonicalView(header.kvs[j].key(), &other) == p.canonical; });
    auto find_exact = [&]() -> uint32_t {
      if (exact_slots == nullptr) {  // the first key not in normal form: room for every key from here
        size_t count = 16;
        while (count < 2 * (n - i)) count *= 2;
        exact_memory = PageBuffer::Zeroed(count * sizeof(uint64_t));
        exact_slots = reinterpret_cast<uint64_t*>(exact_memory.data());
        exact_mask = count - 1;
      }
      const uint64_t hx = Hash(key);
      uint64_t* exact = probe(exact_slots, exact_mask, hx, true, [&](uint32_t j) { return header.kvs[j].key() == key; });
      if (*exact != 0) return SlotIndex(*exact);
      *exact = SlotTag(hx, true) | (uint64_t{i} + 1);
      return i;
    };
    if (*slot == 0) {  // a new canonical key
      *slot = SlotTag(p.hash, false) | (uint64_t{i} + 1);
      first_canonical_[i] = i;
      group_size_[i] = 1;
      last_member[i] = i;
      first_normal[i] = p.normal ? i : kNone;
      first_exact_[i] = p.normal ? i : find_exact();
      return;
    }
    const uint32_t g = SlotIndex(*slot);
    first_canonical_[i] = g;
    ++group_size_[g];
    next_[last_member[g]] = i;
    last_member[g] = i;
    if (!p.normal) {
      first_exact_[i] = find_exact();
    } else if (first_normal[g] == kNone) {
      first_normal[g] = first_exact_[i] = i;
    } else {
      first_exact_[i] = first_normal[g];
    }
  };
  for (uint32_t i = 0; i < n && i < kAhead; ++i) prepare(i);
  for (uint32_t i = 0; i < n; ++i) {
    enter(i, ahead[i % kAhead]);
    if (i + kAhead < n) prepare(i + kAhead);  // reuses the entry just entered
  }
}

uint32_t KeyGroups::FindGroup(std::string_view canonical) const {
  if (size_ == 0) return kNone;
  const uint64_t h = Hash(canonical);
  const uint64_t tag = SlotTag(h, false);
  std::string scratch;
  for (size_t s = h & slot_mask_; slots_[s] != 0; s = (s + 1) & slot_mask_) {
    if ((slots_[s] & kTagMask) != tag) continue;
    const uint32_t j = SlotIndex(slots_[s]);
    if (CanonicalView(header_.kvs[j].key(), &scratch) == canonical) return j;
  }
  return kNone;
}

std::vector<uint32_t> KeyGroups::Members(uint32_t first) const {
  std::vector<uint32_t> out;
  for (uint32_t i = first; i != kNone; i = next_[i]) out.push_back(i);
  return out;
}

}  // namespace ggufguard
