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

bool InNormalForm(std::string_view key, std::string_view canonical) {
  return canonical.data() == key.data() && canonical.size() == key.size();
}

// A table of 4-byte slots: a KV's index + 1 in the low `index_bits` bits,
// the top bits of its hash above them as a tag; 0 is an empty slot. Every
// index + 1 (at most the KV count, below 2^29 as each KV takes 13 bytes or
// more of a header below 4 GiB) fits in index_bits = bit_width(count), which
// leaves 3 or more bits of tag (12 for a million keys).
struct SlotFormat {
  int index_bits;  // 1 to 29
  uint32_t IndexMask() const { return (uint32_t{1} << index_bits) - 1; }
  uint32_t Make(uint64_t hash, uint32_t index) const { return Tag(hash) | (index + 1); }
  uint32_t Tag(uint64_t hash) const { return static_cast<uint32_t>(hash >> (32 + index_bits)) << index_bits; }
  uint32_t TagOf(uint32_t slot) const { return slot & ~IndexMask(); }
  uint32_t Index(uint32_t slot) const { return (slot & IndexMask()) - 1; }
};

// Power-of-two slots, at most half full for `keys` entries.
size_t SlotCount(size_t keys) {
  size_t slots = 16;
  while (slots < 2 * keys) slots *= 2;
  return slots;
}

}  // namespace

// One pass in file order. Each key's canonical form is looked up in the
// table (a hash and, on a tag match, a comparison of canonical keys); a new
// one starts a group, a known one joins it at the end of its member chain.
// Exact duplicates are keys of one canonical group: a key in normal form
// equals, byte for byte, exactly the other keys in normal form of its group
// (the group's first such key is its first exact copy); a key not in
// normal form (a NUL, surrounding white space, a capital: rare in real
// files) is looked up again by its own bytes, in a table of its own.
KeyGroups::KeyGroups(const GgufHeader& header, KeyHash hash)
    : header_(header), hash_(hash), seed_(hash == nullptr ? ProcessHashSeed() : 0), size_(header.kvs.size()) {
  const size_t n = size_;
  if (n == 0) return;
  static_assert(KeyValue::kMaxHeaderPosition / 13 < (uint64_t{1} << 29), "a KV index + 1 fits 29 bits");
  index_bits_ = static_cast<int>(std::bit_width(n));
  const SlotFormat format{index_bits_};
  std::string other;  // a canonical form that is not the key itself
  const size_t slots = SlotCount(n);
  slot_mask_ = slots - 1;
  // Three arrays kept and the slots, bounded by the KV count, which the
  // parser bounded by the header's bytes (13 or more a KV). Fresh memory
  // reads as zero, which the arrays' encoding takes for "itself" and
  // "none" (Decode).
  memory_ = PageBuffer::Zeroed(3 * n * sizeof(uint32_t) + slots * sizeof(uint32_t));
  slots_ = reinterpret_cast<uint32_t*>(memory_.data());
  first_exact_ = slots_ + slots;
  first_canonical_ = first_exact_ + n;
  next_ = first_canonical_ + n;
  // While building, per group (at its first KV, in the same encoding): its
  // last member (0: the first itself), and its first key in normal form
  // (0: the first itself; kNoNormal while it has none).
  PageBuffer build_memory = PageBuffer::Zeroed(2 * n * sizeof(uint32_t));
  uint32_t* const last_member = reinterpret_cast<uint32_t*>(build_memory.data());
  uint32_t* const first_normal = last_member + n;
  constexpr uint32_t kNoNormal = UINT32_MAX;
  PageBuffer exact_memory;
  uint32_t* exact_slots = nullptr;
  size_t exact_mask = 0;

  // The slot of `wanted`'s entry, or the empty slot where it goes; `same(j)`
  // compares KV j's key with the one looked up.
  auto probe = [&format](uint32_t* table, size_t mask, uint64_t h, auto&& same) -> uint32_t* {
    const uint32_t tag = format.Tag(h);
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      uint32_t& slot = table[s];
      if (slot == 0 || (format.TagOf(slot) == tag && same(format.Index(slot)))) return &slot;
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
    uint32_t* slot = probe(slots_, slot_mask_, p.hash,
                           [&](uint32_t j) { return CanonicalView(header.kvs[j].key(), &other) == p.canonical; });
    // The first KV with this key's bytes (a key not in normal form).
    auto find_exact = [&]() -> uint32_t {
      if (exact_slots == nullptr) {  // the first key not in normal form: room for every key from here
        const size_t count = SlotCount(n - i);
        exact_memory = PageBuffer::Zeroed(count * sizeof(uint32_t));
        exact_slots = reinterpret_cast<uint32_t*>(exact_memory.data());
        exact_mask = count - 1;
      }
      const uint64_t hx = Hash(key);
      uint32_t* exact = probe(exact_slots, exact_mask, hx, [&](uint32_t j) { return header.kvs[j].key() == key; });
      if (*exact != 0) return format.Index(*exact);
      *exact = format.Make(hx, i);
      return i;
    };
    auto store = [i](uint32_t* array, uint32_t value) {
      if (value != i) array[i] = value + 1;
    };
    if (*slot == 0) {  // a new canonical key: first of its group, alone so far
      *slot = format.Make(p.hash, i);
      if (!p.normal) {
        first_normal[i] = kNoNormal;
        store(first_exact_, find_exact());
      }
      return;
    }
    const uint32_t g = format.Index(*slot);
    any_shared_ = true;
    first_canonical_[i] = g + 1;
    next_[Decode(last_member[g], g)] = i + 1;
    last_member[g] = i + 1;
    if (!p.normal) {
      store(first_exact_, find_exact());
    } else if (first_normal[g] == kNoNormal) {
      first_normal[g] = i + 1;  // i is its own first exact copy
    } else {
      first_exact_[i] = Decode(first_normal[g], g) + 1;
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
  const SlotFormat format{index_bits_};
  const uint64_t h = Hash(canonical);
  const uint32_t tag = format.Tag(h);
  std::string scratch;
  for (size_t s = h & slot_mask_; slots_[s] != 0; s = (s + 1) & slot_mask_) {
    if (format.TagOf(slots_[s]) != tag) continue;
    const uint32_t j = format.Index(slots_[s]);
    if (CanonicalView(header_.kvs[j].key(), &scratch) == canonical) return j;
  }
  return kNone;
}

uint32_t KeyGroups::CanonicalGroupSize(size_t first) const {
  uint32_t count = 0;
  for (uint32_t i = static_cast<uint32_t>(first); i != kNone; i = Next(i)) ++count;
  return count;
}

std::vector<uint32_t> KeyGroups::Members(uint32_t first) const {
  std::vector<uint32_t> out;
  for (uint32_t i = first; i != kNone; i = Next(i)) out.push_back(i);
  return out;
}

}  // namespace ggufguard
