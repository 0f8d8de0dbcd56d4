#include "ggufguard/rules/known_keys.h"
#include "ggufguard/rules/rules.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"

namespace ggufguard {
namespace {

// The names llama_tables.inc uses; which of them depends on the upstream data.
[[maybe_unused]] constexpr TypeSet kU8 = TypeBit(ValueType::kUint8);
[[maybe_unused]] constexpr TypeSet kI8 = TypeBit(ValueType::kInt8);
[[maybe_unused]] constexpr TypeSet kU16 = TypeBit(ValueType::kUint16);
[[maybe_unused]] constexpr TypeSet kI16 = TypeBit(ValueType::kInt16);
[[maybe_unused]] constexpr TypeSet kU32 = TypeBit(ValueType::kUint32);
[[maybe_unused]] constexpr TypeSet kI32 = TypeBit(ValueType::kInt32);
[[maybe_unused]] constexpr TypeSet kF32 = TypeBit(ValueType::kFloat32);
[[maybe_unused]] constexpr TypeSet kBool = TypeBit(ValueType::kBool);
[[maybe_unused]] constexpr TypeSet kStr = TypeBit(ValueType::kString);
[[maybe_unused]] constexpr TypeSet kU64 = TypeBit(ValueType::kUint64);
[[maybe_unused]] constexpr TypeSet kI64 = TypeBit(ValueType::kInt64);
[[maybe_unused]] constexpr TypeSet kF64 = TypeBit(ValueType::kFloat64);
[[maybe_unused]] constexpr TypeSet kAnyInt = kU8 | kI8 | kU16 | kI16 | kU32 | kI32 | kU64 | kI64;
// Every type but array: also marks keys no source gives a type for.
constexpr TypeSet kAnyScalar = static_cast<TypeSet>(((1u << kValueTypeCount) - 1) & ~TypeBit(ValueType::kArray));

#include "ggufguard/rules/llama_tables.inc"

// The generator sorts every table by bytes and writes no repeats; binary
// search relies on it.
template <typename T, size_t N, typename Key>
constexpr bool StrictlySorted(const T (&table)[N], Key key) {
  for (size_t i = 1; i < N; ++i) {
    if (!(key(table[i - 1]) < key(table[i]))) return false;
  }
  return true;
}
constexpr std::string_view NameOf(const KnownKey& k) { return k.name; }
constexpr std::string_view ArchNameOf(const ArchInfo& a) { return a.name; }
constexpr std::string_view Itself(std::string_view s) { return s; }
static_assert(kGeneratedLlamaMaxLayers == kLlamaMaxLayers && kGeneratedLlamaMaxExperts == kLlamaMaxExperts,
              "llama.cpp changed LLAMA_MAX_LAYERS or LLAMA_MAX_EXPERTS: update rules/rules.h and the rules using them");
static_assert(StrictlySorted(kGeneratedKeys, NameOf) && StrictlySorted(kGeneratedArchKeys, NameOf) &&
                  StrictlySorted(kGeneratedCommonReads, NameOf) && StrictlySorted(kGeneratedArchs, ArchNameOf) &&
                  StrictlySorted(kGeneratedNextnBelowBlockCount, Itself) &&
                  StrictlySorted(kGeneratedNextnEqualBlockCount, Itself),
              "generated tables must be sorted without repeats");
static_assert([] {
  for (const KnownKey& k : kGeneratedPatternKeys) {
    if (k.name.empty() || k.name[0] == '{') return false;
  }
  return true;
}(), "key patterns must start with a literal segment (FindKeyRule compares it first)");
static_assert([] {
  size_t next = 0;
  for (const ArchInfo& a : kGeneratedArchs) {
    if (a.reads_begin != next) return false;
    for (size_t i = 1; i < a.reads_count; ++i) {
      if (!(kGeneratedArchReads[a.reads_begin + i - 1].name < kGeneratedArchReads[a.reads_begin + i].name)) {
        return false;
      }
    }
    next += a.reads_count;
  }
  return next == std::size(kGeneratedArchReads);
}(), "per-architecture read lists must tile kGeneratedArchReads, each sorted");

const KnownKey* FindIn(absl::Span<const KnownKey> table, std::string_view name) {
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const KnownKey& k, std::string_view n) { return k.name < n; });
  return it != table.end() && it->name == name ? &*it : nullptr;
}

// Whole names in a read list are written "=name"; '=' sorts before every
// letter, so they lead the list. Few per list: a scan.
const KnownKey* FindWholeNameIn(absl::Span<const KnownKey> reads, std::string_view name) {
  for (const KnownKey& k : reads) {
    if (k.name.empty() || k.name[0] != '=') break;
    if (k.name.substr(1) == name) return &k;
  }
  return nullptr;
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Segment by segment; "{n}" takes one segment of digits, a final "{*}" the
// non-empty rest.
bool MatchPattern(std::string_view pattern, std::string_view key) {
  while (true) {
    size_t pdot = pattern.find('.');
    std::string_view pseg = pattern.substr(0, pdot);
    if (pseg == "{*}") return !key.empty();
    size_t kdot = key.find('.');
    std::string_view kseg = key.substr(0, kdot);
    if (pseg == "{n}" ? !IsDigits(kseg) : pseg != kseg) return false;
    if (pdot == std::string_view::npos || kdot == std::string_view::npos) {
      return pdot == std::string_view::npos && kdot == std::string_view::npos;
    }
    pattern.remove_prefix(pdot + 1);
    key.remove_prefix(kdot + 1);
  }
}

std::string TypeList(TypeSet set) {
  std::string out;
  for (uint32_t t = 0; t < kValueTypeCount; ++t) {
    if (set & (1u << t)) absl::StrAppend(&out, out.empty() ? "" : "/", Sv(ValueTypeName(static_cast<ValueType>(t))));
  }
  return out;
}

KeyRule RuleOf(const KnownKey& k) { return KeyRule{k.scalar, k.elements, k.array_length}; }

// A value must pass both reads; the generator already combined the two for
// keys an architecture and the common part both read, so this only meets the
// rarer case of a whole-name key read by an architecture and typed globally.
KeyRule Both(const KeyRule& a, const KnownKey& b) {
  KeyRule r{static_cast<TypeSet>(a.scalar & b.scalar), static_cast<TypeSet>(a.elements & b.elements),
            a.array_length != kAnyLength ? a.array_length : b.array_length};
  if (r.scalar == 0 && r.elements == 0) return a;  // disjoint: keep the global rule
  return r;
}

}  // namespace

std::string_view LlamaCppCommit() { return kLlamaCppCommit; }

const ArchInfo* FindArchInfo(std::string_view arch) {
  auto it = std::lower_bound(std::begin(kGeneratedArchs), std::end(kGeneratedArchs), arch,
                             [](const ArchInfo& a, std::string_view n) { return a.name < n; });
  return it != std::end(kGeneratedArchs) && it->name == arch ? &*it : nullptr;
}

absl::Span<const ArchInfo> AllArchInfos() { return kGeneratedArchs; }

bool AssertsNextnBelowBlockCount(std::string_view arch) {
  return std::binary_search(std::begin(kGeneratedNextnBelowBlockCount), std::end(kGeneratedNextnBelowBlockCount), arch);
}

bool AssertsNextnEqualBlockCount(std::string_view arch) {
  return std::binary_search(std::begin(kGeneratedNextnEqualBlockCount), std::end(kGeneratedNextnEqualBlockCount), arch);
}

static_assert([] {
  for (size_t i = 1; i < std::size(kGeneratedArchAsserts); ++i) {
    const ArchAssert &a = kGeneratedArchAsserts[i - 1], &b = kGeneratedArchAsserts[i];
    if (!(a.arch < b.arch || (a.arch == b.arch && a.key <= b.key))) return false;
  }
  return true;
}(), "arch asserts must be sorted by architecture");

absl::Span<const ArchAssert> ArchAsserts(std::string_view arch) {
  const ArchAssert* first = std::lower_bound(std::begin(kGeneratedArchAsserts), std::end(kGeneratedArchAsserts), arch,
                                             [](const ArchAssert& a, std::string_view n) { return a.arch < n; });
  const ArchAssert* last = first;
  while (last != std::end(kGeneratedArchAsserts) && last->arch == arch) ++last;
  return absl::Span<const ArchAssert>(first, static_cast<size_t>(last - first));
}

absl::Span<const KnownKey> CommonReads() { return kGeneratedCommonReads; }

absl::Span<const KnownKey> ArchReads(const ArchInfo& arch) {
  return absl::Span<const KnownKey>(kGeneratedArchReads).subspan(arch.reads_begin, arch.reads_count);
}

bool ArchReadsKey(const ArchInfo* info, std::string_view suffix) {
  if (info == nullptr || info->kind != ArchKind::kModel) return true;
  return FindIn(ArchReads(*info), suffix) != nullptr || FindIn(CommonReads(), suffix) != nullptr;
}

bool IsUnreadArchKey(const KeyIndex& keys, std::string_view key) {
  const ArchInfo* info = keys.arch_info();
  if (info == nullptr || info->kind != ArchKind::kModel) return false;
  const std::string_view arch = keys.arch();
  if (key.size() > arch.size() + 1 && key.substr(0, arch.size()) == arch && key[arch.size()] == '.') {
    return !ArchReadsKey(info, key.substr(arch.size() + 1));
  }
  if (FindWholeNameIn(ArchReads(*info), key) != nullptr) return false;
  // Called only for values a check would flag: a walk of every read list.
  for (const ArchInfo& other : AllArchInfos()) {
    if (FindWholeNameIn(ArchReads(other), key) != nullptr) return true;
  }
  return false;
}

void ForEachRequiredKey(const ArchInfo& arch, absl::FunctionRef<void(std::string_view)> f) {
  if (arch.kind != ArchKind::kModel) return;
  absl::Span<const KnownKey> own = ArchReads(arch);
  for (const KnownKey& k : own) {
    if (k.required) f(k.name);
  }
  for (const KnownKey& k : CommonReads()) {
    if (k.required && FindIn(own, k.name) == nullptr) f(k.name);
  }
}

// The first segments of every whole key and pattern in the tables
// ("general", "tokenizer", "split", ...: about ten), so that a key whose
// first segment is none of them (a million junk keys) is told unknown
// without a search of the tables: a binary search of the 178 whole keys
// was ~60 ns a key, most of validating a header of a million unknown keys
// (docs/performance.md, "Hostile headers").
class FirstSegments {
 public:
  FirstSegments() {
    for (absl::Span<const KnownKey> table : {absl::Span<const KnownKey>(kGeneratedKeys),
                                             absl::Span<const KnownKey>(kGeneratedPatternKeys)}) {
      for (const KnownKey& k : table) {
        const std::string_view first = k.name.substr(0, k.name.find('.'));
        if (std::find(segments_.begin(), segments_.begin() + count_, first) != segments_.begin() + count_) continue;
        if (count_ == segments_.size()) {  // more than expected: never say "unknown" then
          overflow_ = true;
          return;
        }
        segments_[count_++] = first;
        if (!first.empty()) first_bytes_[static_cast<uint8_t>(first[0])] = true;
      }
    }
  }
  bool MayBeKnown(std::string_view first) const {
    if (overflow_) return true;
    if (first.empty() || !first_bytes_[static_cast<uint8_t>(first[0])]) return false;
    for (size_t i = 0; i < count_; ++i) {
      if (segments_[i] == first) return true;
    }
    return false;
  }

 private:
  std::array<std::string_view, 32> segments_{};
  std::array<bool, 256> first_bytes_{};  // the segments' first bytes
  size_t count_ = 0;
  bool overflow_ = false;
};

std::optional<KeyRule> FindKeyRule(std::string_view key, std::string_view arch, const ArchInfo* info) {
  static const FirstSegments first_segments;
  const bool model = info != nullptr && info->kind == ArchKind::kModel;
  const std::string_view first = key.substr(0, key.find('.'));
  const bool arch_key = !arch.empty() && key.size() > arch.size() + 1 && key.compare(0, arch.size(), arch) == 0 &&
                        key[arch.size()] == '.';
  if (!arch_key && !first_segments.MayBeKnown(first)) return std::nullopt;
  if (const KnownKey* k = FindIn(kGeneratedKeys, key)) {
    KeyRule rule = RuleOf(*k);
    if (model) {
      if (const KnownKey* own = FindWholeNameIn(ArchReads(*info), key)) return Both(rule, *own);
      if (const KnownKey* common = FindWholeNameIn(CommonReads(), key)) return Both(rule, *common);
    }
    return rule;
  }
  if (arch_key) {
    std::string_view suffix = key.substr(arch.size() + 1);
    if (model) {
      if (const KnownKey* own = FindIn(ArchReads(*info), suffix)) return RuleOf(*own);
      if (const KnownKey* common = FindIn(CommonReads(), suffix)) return RuleOf(*common);
    }
    if (const KnownKey* k = FindIn(kGeneratedArchKeys, suffix)) return RuleOf(*k);
  }
  // Patterns start with a literal segment: compare it before walking the
  // pattern.
  for (const KnownKey& k : kGeneratedPatternKeys) {
    if (k.name.size() <= first.size() || k.name[first.size()] != '.' || k.name.substr(0, first.size()) != first) {
      continue;
    }
    if (MatchPattern(k.name, key)) return RuleOf(k);
  }
  return std::nullopt;
}

bool AcceptsValue(const KeyRule& k, const Value& v) {
  if (v.type == ValueType::kArray) return (k.elements & TypeBit(v.array.element_type)) != 0;
  return (k.scalar & TypeBit(v.type)) != 0;
}

std::string DescribeTypes(const KeyRule& k) {
  std::string out = TypeList(k.scalar);
  if (k.elements != 0) absl::StrAppend(&out, out.empty() ? "" : " or ", "array of ", TypeList(k.elements));
  return out;
}

bool IsTransformerArch(std::string_view arch) {
  const ArchInfo* info = FindArchInfo(arch);
  return info != nullptr && info->kind == ArchKind::kModel && info->attention;
}

KeyIndex::KeyIndex(const GgufHeader& header) : header_(header), groups_(header) {
  arch_kv_ = Find("general.architecture");
  if (arch_kv_ != nullptr && arch_kv_->type() == ValueType::kString) arch_ = arch_kv_->value().AsString();
  arch_info_ = FindArchInfo(arch_);
}

// A key equal to `key` as a C string has the same canonical key, so it is
// among the candidates, which come in file order: the first match is
// gguf_find_key's answer.
const KeyValue* KeyIndex::Find(std::string_view key) const {
  const KeyValue* found = nullptr;
  groups_.ForEachCandidate(key, [&](uint32_t i) {
    if (CStringKey(header_.kvs[i].key()) != key) return true;
    found = &header_.kvs[i];
    return false;
  });
  return found;
}

const KeyValue* KeyIndex::FindArch(std::string_view suffix) const {
  // A stack buffer: the rules look up a dozen of these per file.
  std::array<char, 256> buf;
  if (arch_.empty() || arch_.size() + 1 + suffix.size() > buf.size()) return nullptr;
  std::memcpy(buf.data(), arch_.data(), arch_.size());
  buf[arch_.size()] = '.';
  std::memcpy(buf.data() + arch_.size() + 1, suffix.data(), suffix.size());
  return Find(std::string_view(buf.data(), arch_.size() + 1 + suffix.size()));
}

std::optional<uint32_t> KeyIndex::U32(const KeyValue* kv) const {
  if (kv == nullptr || kv->type() != ValueType::kUint32) return std::nullopt;
  return static_cast<uint32_t>(*kv->value().AsUnsigned());
}

std::optional<uint64_t> VocabularySize(const KeyIndex& keys) {
  const KeyValue* tokens = keys.Find("tokenizer.ggml.tokens");
  if (tokens != nullptr && tokens->type() == ValueType::kArray) return tokens->value().array.count;
  return keys.U32(keys.FindArch("vocab_size"));
}

}  // namespace ggufguard
