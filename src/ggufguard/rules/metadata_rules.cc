// 3xxx: metadata encoding.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

constexpr bool IsStrictKeyChar(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
// Real files use architecture names such as `command-r` and the odd capital.
constexpr bool IsLenientKeyChar(uint8_t c) { return IsStrictKeyChar(c) || (c >= 'A' && c <= 'Z') || c == '-'; }

// Whether `key` (not empty) passes every check below under the lenient
// grammar: lenient key characters in non-empty segments. One branch-free
// pass with a byte table, for the common case on a header of a million
// keys; a key it refuses goes through the checks that say why.
bool LenientKeyIsClean(std::string_view key) {
  static constexpr auto kKeyByte = [] {
    std::array<uint8_t, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = IsLenientKeyChar(static_cast<uint8_t>(c)) ? 1 : 0;
    return t;
  }();
  uint8_t all_ok = 1, after_dot = 1, empty_segment = 0;  // the key's start counts as after a dot
  for (const char ch : key) {
    const uint8_t c = static_cast<uint8_t>(ch);
    const uint8_t dot = c == '.';
    empty_segment |= dot & after_dot;
    all_ok &= kKeyByte[c] | dot;
    after_dot = dot;
  }
  return all_ok & !empty_segment & !after_dot;
}

// `arch` is general.architecture as llama.cpp reads it: "{arch}." keys are
// built from it as spelled (gpt-oss, command-r, nomic-bert-moe), so under
// the strict grammar that first segment is checked as an architecture name
// (GG4007's [a-z0-9_-]), not as lower_snake_case.
void CheckKey(const KeyValue& kv, RuleContext& ctx, std::string_view arch) {
  std::string_view key = kv.key();
  if (key.empty()) {
    ctx.sink.AddLazy(RuleId::kEmptyKey, kv.offset(), [] { return std::string("empty metadata key"); });
    return;
  }
  if (key.size() > ctx.policy.limits.max_key_length) {
    ctx.sink.AddLazy(RuleId::kKeyTooLong, kv.offset(), [&] {
      return absl::StrCat("key of ", key.size(), " bytes exceeds the limit of ", ctx.policy.limits.max_key_length);
    });
  }
  const bool strict = ctx.policy.strict_key_grammar;
  if (!strict && LenientKeyIsClean(key)) return;
  size_t bad_utf8 = FindInvalidUtf8(key);
  if (bad_utf8 != kValidUtf8) {
    ctx.sink.AddLazy(RuleId::kInvalidUtf8, kv.key_offset() + bad_utf8, [&] {
      return absl::StrCat("key '", EscapeForDisplay(key), "' is not valid UTF-8 at byte ", bad_utf8);
    });
  }
  for (size_t i = 0; i < key.size(); ++i) {
    auto c = static_cast<uint8_t>(key[i]);
    if (c < 0x20 || c >= 0x7F) {
      ctx.sink.AddLazy(RuleId::kKeyControlBytes, kv.key_offset() + i, [&] {
        return absl::StrCat("key '", EscapeForDisplay(key), "' has byte 0x", absl::Hex(c, absl::kZeroPad2), " at ", i,
                            ": keys must be printable ASCII");
      });
      return;  // the grammar check would only repeat this
    }
  }
  size_t start = 0;
  if (strict && !arch.empty() && key.size() > arch.size() && key.substr(0, arch.size()) == arch &&
      key[arch.size()] == '.' &&
      std::all_of(arch.begin(), arch.end(), [](char c) { return IsStrictKeyChar(static_cast<uint8_t>(c)) || c == '-'; })) {
    start = arch.size() + 1;
  }
  bool segment_empty = true;
  for (size_t i = start; i <= key.size(); ++i) {
    if (i == key.size() || key[i] == '.') {
      if (segment_empty) {
        ctx.sink.AddLazy(RuleId::kKeyGrammar, kv.key_offset() + i,
                         [&] { return absl::StrCat("key '", EscapeForDisplay(key), "' has an empty segment"); });
        return;
      }
      segment_empty = true;
      continue;
    }
    auto c = static_cast<uint8_t>(key[i]);
    if (!(strict ? IsStrictKeyChar(c) : IsLenientKeyChar(c))) {
      ctx.sink.AddLazy(RuleId::kKeyGrammar, kv.key_offset() + i, [&] {
        return absl::StrCat("key '", EscapeForDisplay(key), "' has '", EscapeForDisplay(key.substr(i, 1)), "' at ", i,
                            strict ? ": segments must be lower_snake_case" : ": not a key character");
      });
      return;
    }
    segment_empty = false;
  }
}

// Exact duplicates, then keys that differ only in the ways other readers
// ignore; the groups come from the KeyIndex (key_groups.h), so a million keys
// cost a sort, not a million hash-map insertions.
void CheckDuplicateKeys(RuleContext& ctx, const KeyGroups& groups) {
  if (!groups.AnyShared()) return;  // every key alone in its group: nothing to report
  const auto& kvs = ctx.header.kvs;
  RuleReporter duplicate(ctx, RuleId::kDuplicateKey);
  RuleReporter collision(ctx, RuleId::kKeyCollision);
  for (size_t i = 0; i < kvs.size(); ++i) {
    const uint32_t exact = groups.FirstExact(i);
    if (exact != i) {
      duplicate.Add(kvs[i].offset(), [&] {
        return absl::StrCat("duplicate key '", EscapeForDisplay(kvs[i].key()), "' (first at offset ", kvs[exact].offset(),
                            "); readers disagree on which value wins");
      });
      continue;
    }
    const uint32_t canonical = groups.FirstCanonical(i);
    if (canonical != i) {
      const KeyValue& first = kvs[canonical];
      collision.Add(kvs[i].offset(), [&] {
        return absl::StrCat("key '", EscapeForDisplay(kvs[i].key()), "' collides with '", EscapeForDisplay(first.key()),
                            "' (offset ", first.offset(),
                            ") once truncated at NUL, trimmed of white space or case-folded, as other readers do");
      });
    }
  }
}

bool IsFiniteF32(uint32_t bits) { return (bits & 0x7F800000u) != 0x7F800000u; }
bool IsFiniteF64(uint64_t bits) { return (bits & 0x7FF0000000000000ull) != 0x7FF0000000000000ull; }

void CheckStringContents(std::string_view s, uint64_t offset, std::string_view where, RuleContext& ctx) {
  size_t bad = FindInvalidUtf8(s);
  if (bad != kValidUtf8) {
    ctx.sink.Add(RuleId::kInvalidUtf8, offset + bad,
                 absl::StrCat(Sv(where), " is not valid UTF-8 at byte ", bad, ": '", EscapeForDisplay(s), "'"));
  }
  const void* nul = s.empty() ? nullptr : std::memchr(s.data(), 0, s.size());
  if (nul != nullptr) {
    size_t at = static_cast<const char*>(nul) - s.data();
    ctx.sink.Add(RuleId::kNulInString, offset + at,
                 absl::StrCat(Sv(where), " contains NUL at byte ", at, "; C-string readers see only '",
                              EscapeForDisplay(s.substr(0, at)), "'"));
  }
}

// What CheckStringContents accepts without a finding: valid UTF-8, no NUL.
// It allocates nothing, so callers build a finding's label ("element 7 of
// 'tokenizer.ggml.tokens'") only for a string that has a finding, never one
// per string.
bool StringIsClean(std::string_view s) {
  return FindInvalidUtf8(s) == kValidUtf8 && (s.empty() || std::memchr(s.data(), 0, s.size()) == nullptr);
}

// [p, p + n) is valid UTF-8 and holds exactly `zero_bytes` bytes 0x00: one
// vectorised pass, no per-string work.
bool BytesAreClean(const uint8_t* p, uint64_t n, uint64_t zero_bytes) {
  const TextScan scan = ScanTextBulk(p, n);
  return scan.valid_utf8 && scan.zero_bytes == zero_bytes;
}

// A run of whole elements of a string array, [p, p + n), holding `strings`
// strings, `empty` of them empty, every length below 128. Each length
// field's bytes are then ASCII, so the run is valid UTF-8 exactly when every
// string is (a sequence cut at a string's end meets an ASCII byte and fails;
// one cut by the end of the run fails too), and it holds exactly
// (length_size - 1) zero bytes per length field plus one per empty string
// unless some string contains NUL. (No overflow: each string's length field
// lies in the run, so strings <= n / length_size.)
bool ShortStringRunIsClean(const uint8_t* p, uint64_t n, uint64_t strings, uint64_t empty, uint32_t length_size) {
  return BytesAreClean(p, n, strings * (length_size - 1) + empty);
}

// The walk of StringArrayIsClean for arrays with long strings, with the
// length width and byte order fixed so that the loop tests neither per string
// (rules/metadata_encoding on the gpt-2 vocabulary: 361 -> 251 us;
// docs/performance.md).
template <typename LenT, ByteOrder kOrder>
bool StringRunsAreClean(const uint8_t* data, uint64_t size, uint64_t count) {
  constexpr uint32_t ls = sizeof(LenT);
  uint64_t pos = 0, run_start = 0, run_strings = 0, run_empty = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (size - pos < ls) return false;  // the parser proved the walk: a bug otherwise
    const uint64_t len = LoadUnsigned<LenT>(data + pos, kOrder);
    if (len > size - pos - ls) return false;
    if (len < 128) {
      ++run_strings;
      run_empty += (len == 0);
    } else {
      const uint8_t* s = data + pos + ls;
      if (!ShortStringRunIsClean(data + run_start, pos - run_start, run_strings, run_empty, ls) ||
          !BytesAreClean(s, len, 0)) {
        return false;
      }
      run_start = pos + ls + len;
      run_strings = run_empty = 0;
    }
    pos += ls + len;
  }
  return ShortStringRunIsClean(data + run_start, pos - run_start, run_strings, run_empty, ls);
}

// True when every string of the array is clean, decided in bulk. When the
// parser saw no string of 128 bytes or more (max_string_length), the whole
// element range is one run. Otherwise (real vocabularies have a few long
// tokens, whose length fields hold non-ASCII bytes) the lengths are walked
// once: runs of short strings are checked in bulk, each long string on its
// own, without its length field. False means "look string by string", not
// necessarily that a string is bad.
bool StringArrayIsClean(const ArrayView& a) {
  const uint8_t* data = a.element_bytes.data();
  const uint64_t size = a.element_bytes.size();
  if (a.max_string_length < 128) return ShortStringRunIsClean(data, size, a.count, a.empty_strings, a.length_size);
  const bool big = a.order == ByteOrder::kBig;
  if (a.length_size == 8) {
    return big ? StringRunsAreClean<uint64_t, ByteOrder::kBig>(data, size, a.count)
               : StringRunsAreClean<uint64_t, ByteOrder::kLittle>(data, size, a.count);
  }
  return big ? StringRunsAreClean<uint32_t, ByteOrder::kBig>(data, size, a.count)
             : StringRunsAreClean<uint32_t, ByteOrder::kLittle>(data, size, a.count);
}

// Every string of a string array: in bulk (above), and only when that fails
// string by string, to say which and where.
void CheckStringArray(const ArrayView& a, std::string_view key, RuleContext& ctx) {
  if (StringArrayIsClean(a)) return;
  a.ForEachString(a.count, [&](uint64_t i, std::string_view s, uint64_t at) {
    if (!StringIsClean(s)) CheckStringContents(s, at, absl::StrCat("element ", i, " of '", EscapeForDisplay(key), "'"), ctx);
    return true;
  });
}

// True when no element of a float array is NaN or infinite (exponent bits
// all ones). One branch-free pass that compilers vectorise; the mask is
// byte-swapped for a big-endian file instead of every element (the file and
// the host are then both read as stored, as LoadUnsigned does on a
// little-endian host).
template <typename T>
bool AllFinite(const ArrayView& a, T exponent_mask) {
  if (a.order == ByteOrder::kBig) {
    if constexpr (sizeof(T) == 4) exponent_mask = __builtin_bswap32(exponent_mask);
    if constexpr (sizeof(T) == 8) exponent_mask = __builtin_bswap64(exponent_mask);
  }
  const uint8_t* p = a.element_bytes.data();
  bool non_finite = false;
  for (uint64_t i = 0; i < a.count; ++i) {
    T bits;
    std::memcpy(&bits, p + i * sizeof(T), sizeof(T));
    non_finite |= (bits & exponent_mask) == exponent_mask;
  }
  return !non_finite;
}

// Fixed-size elements. Clean arrays are the rule (a vocabulary's scores are
// tens of thousands of floats): one branch-free pass decides, and only an
// array with a bad element is walked again to report each one.
void CheckFixedArray(const ArrayView& a, std::string_view key, RuleContext& ctx) {
  switch (a.element_type) {
    case ValueType::kBool: {
      uint8_t high_bits = 0;  // any bit above bit 0: a byte other than 0 or 1
      for (uint64_t i = 0; i < a.count; ++i) high_bits |= a.element_bytes[i] & 0xFE;
      if (high_bits == 0) return;
      for (uint64_t i = 0; i < a.count; ++i) {
        uint8_t b = a.element_bytes[i];
        if (b > 1) {
          ctx.sink.Add(RuleId::kInvalidBool, a.elements_offset + i,
                       absl::StrCat("element ", i, " of '", EscapeForDisplay(key), "' is bool byte ", b, ", not 0 or 1"));
        }
      }
      return;
    }
    case ValueType::kFloat32:
      if (AllFinite<uint32_t>(a, 0x7F800000u)) return;
      for (uint64_t i = 0; i < a.count; ++i) {
        if (!IsFiniteF32(a.ScalarAt<uint32_t>(i))) {
          ctx.sink.Add(RuleId::kNonFiniteFloat, a.elements_offset + 4 * i,
                       absl::StrCat("element ", i, " of '", EscapeForDisplay(key), "' is NaN or infinite"));
        }
      }
      return;
    case ValueType::kFloat64:
      if (AllFinite<uint64_t>(a, 0x7FF0000000000000ull)) return;
      for (uint64_t i = 0; i < a.count; ++i) {
        if (!IsFiniteF64(a.ScalarAt<uint64_t>(i))) {
          ctx.sink.Add(RuleId::kNonFiniteFloat, a.elements_offset + 8 * i,
                       absl::StrCat("element ", i, " of '", EscapeForDisplay(key), "' is NaN or infinite"));
        }
      }
      return;
    default:
      return;  // integers: every bit pattern is a value
  }
}

void CheckArray(const ArrayView& a, std::string_view key, uint32_t depth, RuleContext& ctx);

// Arrays of arrays: the parser proved every inner header and element, so the
// walk below cannot fail; it re-reads them to check each inner array.
// Reads one inner array at `r` (which walks the outermost array's bytes,
// whose first byte is at `base`) and leaves `r` just past it.
bool CheckInnerArray(ByteReader& r, uint64_t base, uint32_t length_size, std::string_view key, uint32_t depth,
                     RuleContext& ctx) {
  auto read_length = [&](uint64_t* v) {
    if (length_size == 8) return r.ReadU64(v);
    uint32_t v32;
    if (!r.ReadU32(&v32)) return false;
    *v = v32;
    return true;
  };
  ArrayView inner;
  inner.order = r.order();
  inner.length_size = length_size;
  if (!r.ReadU32(&inner.element_type_raw) || !IsKnownValueType(inner.element_type_raw)) return false;
  inner.element_type = static_cast<ValueType>(inner.element_type_raw);
  if (!read_length(&inner.count)) return false;
  inner.elements_offset = base + r.position();
  const uint64_t start = r.position();
  if (inner.element_type == ValueType::kArray) {
    if (depth > kHardMaxNestingDepth) return false;
    for (uint64_t k = 0; k < inner.count; ++k) {
      if (!CheckInnerArray(r, base, length_size, key, depth + 1, ctx)) return false;
    }
    return true;
  }
  if (inner.element_type == ValueType::kString) {
    for (uint64_t k = 0; k < inner.count; ++k) {
      uint64_t len;
      if (!read_length(&len) || !r.Skip(len)) return false;
      inner.max_string_length = len > inner.max_string_length ? len : inner.max_string_length;
      inner.empty_strings += (len == 0);
    }
  } else {
    uint64_t n;
    if (!CheckedMul(inner.count, ScalarSize(inner.element_type), &n) || !r.Skip(n)) return false;
  }
  inner.element_bytes = r.Span().subspan(start, r.position() - start);
  CheckArray(inner, key, depth, ctx);
  return true;
}

void CheckNestedArrays(const ArrayView& a, std::string_view key, uint32_t depth, RuleContext& ctx) {
  ByteReader r(a.element_bytes, a.order);
  for (uint64_t i = 0; i < a.count; ++i) {
    if (!CheckInnerArray(r, a.elements_offset, a.length_size, key, depth + 1, ctx)) return;
  }
}

void CheckArray(const ArrayView& a, std::string_view key, uint32_t depth, RuleContext& ctx) {
  if (depth > kHardMaxNestingDepth) return;
  switch (a.element_type) {
    case ValueType::kString:
      CheckStringArray(a, key, ctx);
      return;
    case ValueType::kArray:
      CheckNestedArrays(a, key, depth, ctx);
      return;
    default:
      CheckFixedArray(a, key, ctx);
      return;
  }
}

// NaN and infinities count only where a loader reads them: llama.cpp's saver
// writes NaN for the float hyperparameters a model never set, in keys its
// architecture does not read (IsUnreadArchKey).
void CheckValue(const KeyValue& kv, RuleContext& ctx, const KeyIndex& keys) {
  // Every bit pattern of an integer is a value: nothing to decode.
  switch (kv.type()) {
    case ValueType::kUint8: case ValueType::kInt8: case ValueType::kUint16: case ValueType::kInt16:
    case ValueType::kUint32: case ValueType::kInt32: case ValueType::kUint64: case ValueType::kInt64:
      return;
    default:
      break;
  }
  const Value v = kv.value();
  switch (v.type) {
    case ValueType::kBool:
      if (v.bytes[0] > 1) {
        ctx.sink.Add(RuleId::kInvalidBool, v.offset,
                     absl::StrCat("'", EscapeForDisplay(kv.key()), "' is bool byte ", v.bytes[0], ", not 0 or 1"));
      }
      return;
    case ValueType::kFloat32:
    case ValueType::kFloat64:
      if (!std::isfinite(*v.AsDouble()) && !IsUnreadArchKey(keys, CStringKey(kv.key()))) {
        ctx.sink.Add(RuleId::kNonFiniteFloat, v.offset,
                     absl::StrCat("'", EscapeForDisplay(kv.key()), "' is NaN or infinite"));
      }
      return;
    case ValueType::kString:
      if (StringIsClean(v.AsString())) return;  // the label is built only for a finding
      CheckStringContents(v.AsString(), v.offset, absl::StrCat("value of '", EscapeForDisplay(kv.key()), "'"), ctx);
      return;
    case ValueType::kArray:
      if ((v.array.element_type == ValueType::kFloat32 || v.array.element_type == ValueType::kFloat64) &&
          IsUnreadArchKey(keys, CStringKey(kv.key()))) {
        return;
      }
      CheckArray(v.array, kv.key(), 0, ctx);
      return;
    default:
      return;
  }
}

}  // namespace

void CheckMetadataEncoding(RuleContext& ctx, const KeyIndex& keys) {
  for (const KeyValue& kv : ctx.header.kvs) {
    CheckKey(kv, ctx, keys.arch());
    CheckValue(kv, ctx, keys);
  }
  CheckDuplicateKeys(ctx, keys.groups());
}

}  // namespace ggufguard
