#include "ggufguard/parse/parser.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/checked_math.h"
#include "ggufguard/base/text.h"
#include "ggufguard/base/text_hash.h"
#include "ggufguard/format/layout.h"

namespace ggufguard {
namespace {

constexpr uint64_t kUnreachable = std::numeric_limits<uint64_t>::max();

// Magic values that are not GGUF but that people will feed us: name them.
struct KnownMagic {
  char bytes[4];
  std::string_view what;
};
constexpr KnownMagic kLegacyMagics[] = {
    {{'F', 'U', 'G', 'G'}, "pre-release GGUF (magic written as a little-endian u32, 'FUGG'); not parseable as any released version"},
    {{'l', 'm', 'g', 'g'}, "legacy GGML (unversioned), the format before GGUF"},
    {{'f', 'm', 'g', 'g'}, "legacy GGMF, the format before GGUF"},
    {{'t', 'j', 'g', 'g'}, "legacy GGJT, the format before GGUF"},
    {{'g', 'g', 'm', 'l'}, "legacy GGML (unversioned, byte-swapped), the format before GGUF"},
    {{'g', 'g', 'm', 'f'}, "legacy GGMF (byte-swapped), the format before GGUF"},
    {{'g', 'g', 'j', 't'}, "legacy GGJT (byte-swapped), the format before GGUF"},
};

// `key` read as a C string (cut at its first NUL) equals `name`, which holds
// no NUL. No scan for the NUL: a million keys come through here.
bool CStringKeyIs(std::string_view key, std::string_view name) {
  return key.size() >= name.size() && std::memcmp(key.data(), name.data(), name.size()) == 0 &&
         (key.size() == name.size() || key[name.size()] == '\0');
}

}  // namespace

class Parser {
 public:
  Parser(absl::Span<const uint8_t> bytes, const ParseOptions& options, FindingSink& sink)
      : bytes_(bytes), r_(bytes, ByteOrder::kLittle), options_(options), sink_(sink) {}

  ParseResult Run() {
    if (screen_ != nullptr) {
      screen_->kv_index_.reset();
      screen_->count_ = 0;
      screen_->zero_ = 0;
    }
    if (ParseFileHeader() && ParseKvs() && ParseTensorInfos()) Finish();
    return std::move(result_);
  }

 private:
  GgufHeader& header() { return result_.header; }
  const GgufHeader& header() const { return result_.header; }
  const Limits& limits() const { return options_.limits; }

  // Running out of bytes: a finding for a whole file, a request for more
  // bytes for a prefix. `field` is where the field that needs them starts.
  bool Truncated(uint64_t field, uint64_t needed_end, std::string_view what) {
    if (!options_.complete && needed_end > bytes_.size()) return NeedMoreBytes(needed_end);
    std::string need = needed_end == kUnreachable ? std::string("more than 2^64 bytes")
                                                   : absl::StrCat("at least ", needed_end, " bytes");
    sink_.Add(RuleId::kTruncated, field,
              absl::StrCat("truncated: ", Sv(what), " needs ", need, " but the file has ", bytes_.size()));
    result_.status = ParseStatus::kFailed;
    return false;
  }

  // Where the header probably ends, from the items parsed so far: the
  // average KV (or tensor info) times those still to come. A guess only
  // (a crafted header can make it far off either way): callers bound what
  // they read by it.
  uint64_t ExpectedHeaderEnd() const {
    const uint64_t pos = r_.position();
    const uint64_t kvs = header().kvs.size(), tensors = header().tensors.size();
    // Tensor infos still to come, at a typical 64 bytes each until some
    // are seen.
    auto rest_of_infos = [&](uint64_t at) {
      const uint64_t left = header().tensor_count - tensors;
      const uint64_t each = tensors > 0 ? (at - infos_start_) / tensors + 1 : 64;
      return SatAdd(at, SatMul(left, each));
    };
    uint64_t end = pos;
    if (kvs < header().kv_count) {
      if (kvs > 0) end = rest_of_infos(SatAdd(pos, SatMul(header().kv_count - kvs, (pos - kvs_start_) / kvs + 1)));
    } else {
      end = rest_of_infos(pos);
    }
    return std::max(end, min_end_);
  }

  // A prefix too short for a verdict: the caller reads at least
  // `needed_end` bytes (and the counts' minimum while it is unproven).
  bool NeedMoreBytes(uint64_t needed_end) {
    result_.status = ParseStatus::kNeedMoreBytes;
    result_.bytes_needed = counts_proven_ ? needed_end : std::max(needed_end, min_end_);
    result_.bytes_expected = std::max(result_.bytes_needed, ExpectedHeaderEnd());
    return false;
  }

  bool Fail(RuleId id, uint64_t offset, std::string message) {
    // Past unproven counts a prefix's error is no verdict: the whole file
    // may be shorter than the counts' minimum, and then its verdict is the
    // truncation that a complete parse reports before reading any KV.
    if (!counts_proven_) return NeedMoreBytes(min_end_);
    sink_.Add(id, offset, std::move(message));
    result_.status = ParseStatus::kFailed;
    return false;
  }

  // The end offset of `n` bytes starting at the cursor, or kUnreachable.
  uint64_t EndOf(uint64_t n) const {
    uint64_t end;
    return CheckedAdd(r_.position(), n, &end) ? end : kUnreachable;
  }

  bool Require(uint64_t n, uint64_t field, std::string_view what) {
    return r_.CanRead(n) || Truncated(field, EndOf(n), what);
  }

  bool ReadU32(uint32_t* v, std::string_view what) {
    uint64_t at = r_.position();
    return Require(4, at, what) && r_.ReadU32(v);
  }
  bool ReadU64(uint64_t* v, std::string_view what) {
    uint64_t at = r_.position();
    return Require(8, at, what) && r_.ReadU64(v);
  }
  // A count, length or dim: u32 in v1, u64 later.
  bool ReadLength(uint64_t* v, std::string_view what) {
    if (length_size_ == 8) return ReadU64(v, what);
    uint32_t v32;
    if (!ReadU32(&v32, what)) return false;
    *v = v32;
    return true;
  }

  // A length-prefixed string, borrowed. `start` receives the length field's
  // offset.
  bool ReadString(std::string_view* out, uint64_t* start, std::string_view what) {
    *start = r_.position();
    uint64_t len;
    if (!ReadLength(&len, what)) return false;
    if (len > limits().max_string_length) {
      return Fail(RuleId::kStringLengthLimit, *start,
                  absl::StrCat(Sv(what), " length ", len, " exceeds the limit of ", limits().max_string_length));
    }
    absl::Span<const uint8_t> s;
    if (!Require(len, *start, what)) return false;
    if (!r_.ReadBytes(len, &s)) return false;
    *out = AsStringView(s);
    return true;
  }

  bool ParseFileHeader() {
    absl::Span<const uint8_t> magic;
    if (!Require(4, 0, "the magic")) return false;
    if (!r_.ReadBytes(4, &magic)) return false;
    if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
      for (const KnownMagic& m : kLegacyMagics) {
        if (std::memcmp(magic.data(), m.bytes, 4) == 0) {
          return Fail(RuleId::kLegacyMagic, 0, absl::StrCat("not GGUF: ", Sv(m.what)));
        }
      }
      return Fail(RuleId::kBadMagic, 0, "not a GGUF file: the first 4 bytes are not 'GGUF'");
    }
    uint32_t version;
    if (!ReadU32(&version, "the version")) return false;
    // A file written on a big-endian machine stores version 3 as 00 00 00 03:
    // read little-endian its low 16 bits are zero (the heuristic gguf-py and
    // huggingface.js use; ggml rejects such files).
    if (version != 0 && (version & 0xFFFF) == 0) {
      version = __builtin_bswap32(version);
      r_.set_order(ByteOrder::kBig);
      header().byte_order = ByteOrder::kBig;
      sink_.Add(RuleId::kBigEndian, 4, "big-endian file: every field and the tensor data are big-endian");
    }
    header().version = version;
    if (version == 0 || version > 3) {
      return Fail(RuleId::kUnsupportedVersion, 4,
                  absl::StrCat("unsupported version ", version, " (this validator knows 1, 2 and 3)"));
    }
    if (version == 1) {
      length_size_ = 4;
      sink_.Add(RuleId::kVersion1, 4, "GGUF v1 (u32 counts and lengths): ggml and llama.cpp no longer load it");
    }
    uint64_t tensor_count_at = r_.position();
    if (!ReadLength(&header().tensor_count, "tensor_count")) return false;
    uint64_t kv_count_at = r_.position();
    if (!ReadLength(&header().kv_count, "kv_count")) return false;

    if (header().tensor_count > limits().max_tensor_count) {
      return Fail(RuleId::kTensorCountLimit, tensor_count_at,
                  absl::StrCat("tensor_count ", header().tensor_count, " exceeds the limit of ",
                               limits().max_tensor_count));
    }
    if (header().kv_count > limits().max_kv_count) {
      return Fail(RuleId::kKvCountLimit, kv_count_at,
                  absl::StrCat("kv_count ", header().kv_count, " exceeds the limit of ", limits().max_kv_count));
    }
    // Both counts are now small enough that these products cannot overflow,
    // but prove it anyway: the limits come from a policy file.
    uint64_t kv_min, tensor_min, min_total;
    if (!CheckedMul(header().kv_count, kMinKvSize(version), &kv_min) ||
        !CheckedMul(header().tensor_count, kMinTensorInfoSize(version), &tensor_min) ||
        !CheckedAdd(kv_min, tensor_min, &min_total)) {
      return Truncated(kv_count_at, kUnreachable, "the declared kv_count and tensor_count");
    }
    kvs_start_ = r_.position();
    min_end_ = SatAdd(kvs_start_, min_total);
    if (r_.CanRead(min_total)) {
      // Proven: each KV and tensor info takes at least its minimum size in
      // bytes that are present, so these reservations are bounded by the
      // input.
      header().kvs.reserve(header().kv_count);
      header().tensors.reserve(header().tensor_count);
      return true;
    }
    // A prefix goes on with the KVs it holds, each proven as it is read, so
    // that the source learns their average size (ExpectedHeaderEnd) and
    // reads the rest at once; nothing is reserved from the counts.
    if (!options_.complete) {
      counts_proven_ = false;
      return true;
    }
    return Truncated(kv_count_at, EndOf(min_total),
                     absl::StrCat(header().kv_count, " KVs and ", header().tensor_count, " tensor infos"));
  }

  bool ParseKvs() {
    for (uint64_t i = 0; i < header().kv_count; ++i) {
      std::string_view key;
      uint64_t kv_at;
      if (!ReadString(&key, &kv_at, "a metadata key")) return false;
      const uint64_t type_at = r_.position();
      uint32_t type;
      if (!ReadU32(&type, "a value type")) return false;
      // Only the first KV with the key, whatever its type, is the one a
      // lookup resolves.
      hash_this_array_ = screen_ != nullptr && !hashed_key_seen_ && CStringKeyIs(key, screen_->key());
      hashed_key_seen_ = hashed_key_seen_ || hash_this_array_;
      Value value;
      const bool read = ReadValue(type, type_at, &value, 0);
      const bool hashed = hash_this_array_ && read && value.type == ValueType::kArray &&
                          value.array.element_type == ValueType::kString;
      hash_this_array_ = false;
      if (!read) return false;
      // The compact KeyValue holds 32-bit positions: no KV may end past the
      // header limit, which is at most KeyValue::kMaxHeaderPosition.
      if (r_.position() > header_limit_) {
        return Fail(RuleId::kHeaderSizeLimit, 0,
                    absl::StrCat("header of at least ", r_.position(), " bytes exceeds the limit of ", header_limit_));
      }
      KeyValue& kv = header().kvs.emplace_back(key, kv_at, length_size_, r_.order(), value.type,
                                               value.array.element_type, value.bytes.size());
      if (value.type == ValueType::kArray && value.array.element_type == ValueType::kString) {
        kv.set_string_stats(value.array.max_string_length, value.array.empty_strings);
      }
      if (hashed) screen_->kv_index_ = static_cast<uint32_t>(header().kvs.size() - 1);
    }
    return true;
  }

  bool ReadValue(uint32_t type_raw, uint64_t type_at, Value* out, uint32_t depth) {
    if (!IsKnownValueType(type_raw)) {
      return Fail(depth == 0 ? RuleId::kInvalidValueType : RuleId::kInvalidArrayType, type_at,
                  absl::StrCat("value type id ", type_raw, " is not one of the 13 GGUF types (0..12)"));
    }
    ValueType type = static_cast<ValueType>(type_raw);
    if (!IsValueTypeInVersion(type, header().version)) {
      sink_.Add(RuleId::kValueTypeVersion, type_at,
                absl::StrCat("value type ", Sv(ValueTypeName(type)), " does not exist in GGUF v1"));
    }
    out->type = type;
    out->order = r_.order();
    if (type == ValueType::kString) {
      uint64_t start;
      std::string_view s;
      if (!ReadString(&s, &start, "a string value")) return false;
      out->offset = start + length_size_;
      out->bytes = absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
      return true;
    }
    if (type == ValueType::kArray) return ReadArray(out, depth);
    uint32_t size = ScalarSize(type);
    out->offset = r_.position();
    if (!Require(size, out->offset, "a scalar value")) return false;
    return r_.ReadBytes(size, &out->bytes);
  }

  bool ReadArray(Value* out, uint32_t depth) {
    ArrayView& a = out->array;
    uint64_t array_at = r_.position();
    if (!ReadU32(&a.element_type_raw, "an array element type")) return false;
    if (!IsKnownValueType(a.element_type_raw)) {
      return Fail(RuleId::kInvalidArrayType, array_at,
                  absl::StrCat("array element type id ", a.element_type_raw, " is not one of the 13 GGUF types (0..12)"));
    }
    a.element_type = static_cast<ValueType>(a.element_type_raw);
    if (!IsValueTypeInVersion(a.element_type, header().version)) {
      sink_.Add(RuleId::kValueTypeVersion, array_at,
                absl::StrCat("array element type ", Sv(ValueTypeName(a.element_type)), " does not exist in GGUF v1"));
    }
    uint64_t count_at = r_.position();
    if (!ReadLength(&a.count, "an array length")) return false;
    if (a.count > limits().max_array_length) {
      return Fail(RuleId::kArrayLengthLimit, count_at,
                  absl::StrCat("array length ", a.count, " exceeds the limit of ", limits().max_array_length));
    }
    uint64_t min_bytes;
    if (!CheckedMul(a.count, MinEncodedSize(a.element_type, length_size_), &min_bytes)) {
      return Truncated(count_at, kUnreachable, absl::StrCat("an array of ", a.count, " elements"));
    }
    // The message is built only when the bytes are missing: an array of
    // arrays comes through here once per inner array.
    if (!r_.CanRead(min_bytes)) {
      return Truncated(count_at, EndOf(min_bytes),
                       absl::StrCat("an array of ", a.count, " ", Sv(ValueTypeName(a.element_type))));
    }
    a.length_size = length_size_;
    a.order = r_.order();
    a.elements_offset = r_.position();
    out->offset = a.elements_offset;
    const uint64_t start = r_.position();
    bool ok;
    switch (a.element_type) {
      case ValueType::kString:
        ok = WalkStringArray(&a, hash_this_array_ && depth == 0);
        break;
      case ValueType::kArray:
        ok = WalkNestedArrays(a, array_at, depth);
        break;
      default:
        ok = r_.Skip(min_bytes);  // fixed-size elements: proven present above
        break;
    }
    if (!ok) return false;
    a.element_bytes = bytes_.subspan(start, r_.position() - start);
    out->bytes = a.element_bytes;
    return true;
  }

  // The hot loop: ~98,000 strings in a 1.8 MB vocabulary header. Each length
  // is checked against the bytes that remain (a subtraction), never against
  // a stream position; the loop also gathers the statistics that let the
  // UTF-8 rule validate the whole array in one pass.
  //
  // Its speed is the latency of one chain: where string i+1 starts depends on
  // string i's length, so the loop can go no faster than one load plus the
  // arithmetic that turns the loaded length into the next address. That
  // arithmetic is kept to one add by splitting the position in two: `fields`
  // moves by sizeof(LenT) per string (no dependence on loaded data) and
  // `lengths` sums the string lengths (the chain); string i's length field is
  // at fields + lengths. Everything else (bounds, limit, statistics) hangs off
  // the chain and runs in parallel with it. About 20% faster than
  // `pos += sizeof(LenT) + len`, whose three-operand add sits on the chain.
  //
  // With kHash, each string's TextHash goes into screen_'s duplicate screen
  // (the token array, for GG9054): that hangs off the chain too, so it
  // costs the loads, multiplies and stores it adds, not a second walk.
  // Whether some string holds a 0 byte is learnt after the loop
  // (ArrayHoldsZeroInAString), not in it: the loop is bound by its
  // instruction count, and testing each string's words cost as much as
  // hashing them. Instantiated per length width, byte order and hashing, so
  // that the loop tests none of them per string.
  // Whether a string of the array at `bytes` (its `count` length fields and
  // strings, all proven present by WalkStrings) holds a 0 byte. Every 0 byte
  // of the array is in a length field or in a string; while every length is
  // below 256 a length field's 0 bytes are all but its lowest (all of them
  // for an empty string), so one vectorised count over the array answers.
  // Longer strings (no real vocabulary's) are looked at one by one.
  template <typename LenT, ByteOrder kOrder>
  static bool ArrayHoldsZeroInAString(const uint8_t* bytes, uint64_t size, uint64_t count, uint64_t longest,
                                      uint64_t empties) {
    if (longest < 256) return CountZeroBytes(bytes, size) != count * (sizeof(LenT) - 1) + empties;
    for (uint64_t i = 0, pos = 0; i < count; ++i) {
      const uint64_t len = LoadUnsigned<LenT>(bytes + pos, kOrder);
      pos += sizeof(LenT);
      if (len > 0 && std::memchr(bytes + pos, 0, len) != nullptr) return true;
      pos += len;
    }
    return false;
  }

  template <typename LenT, ByteOrder kOrder, bool kHash>
  bool WalkStrings(ArrayView* a) {
    const uint8_t* const base = bytes_.data();
    const uint64_t size = bytes_.size();
    const uint64_t max_len = limits().max_string_length;
    constexpr ByteOrder order = kOrder;
    const uint8_t* fields = base + r_.position();
    uint64_t lengths = 0;
    uint64_t longest = 0, empties = 0;
    const uint64_t count = a->count;  // a local: the screen's stores might alias *a
    // The caller proved `count` strings of at least sizeof(LenT) bytes
    // present (ReadArray), so the screen is bounded by the input.
    HashScreen* screen = nullptr;
    const uint8_t* const first_field = fields;
    if constexpr (kHash) {
      screen = &screen_->screen_.emplace(count);
      screen_->count_ = count;
    }
    for (uint64_t i = 0; i < count; ++i, fields += sizeof(LenT)) {
      const uint64_t pos = static_cast<uint64_t>(fields - base) + lengths;  // this length field
      if (size - pos < sizeof(LenT)) {
        (void)r_.Skip(pos - r_.position());
        return Truncated(pos, EndOf(sizeof(LenT)), "a string length in an array");
      }
      const uint64_t len = LoadUnsigned<LenT>(fields + lengths, order);
      if (len > max_len) {
        return Fail(RuleId::kStringLengthLimit, pos,
                    absl::StrCat("array string length ", len, " exceeds the limit of ", max_len));
      }
      if (len > size - pos - sizeof(LenT)) {
        (void)r_.Skip(pos + sizeof(LenT) - r_.position());
        return Truncated(pos, EndOf(len), absl::StrCat("array string ", i, " of length ", len));
      }
      if constexpr (kHash) {
        screen->Add(TextHash(fields + lengths + sizeof(LenT), len, size - pos - sizeof(LenT)));
      }
      lengths += len;
      longest = len > longest ? len : longest;
      empties += (len == 0);
    }
    a->max_string_length = longest;
    a->empty_strings = empties;
    const uint64_t end = static_cast<uint64_t>(fields - base) + lengths;
    if constexpr (kHash) {
      const uint64_t start = static_cast<uint64_t>(first_field - base);
      screen_->zero_ = ArrayHoldsZeroInAString<LenT, kOrder>(base + start, end - start, count, longest, empties);
    }
    return r_.Skip(end - r_.position());
  }

  bool WalkStringArray(ArrayView* a, bool hash) {
    const bool big = r_.order() == ByteOrder::kBig;
    if (length_size_ == 8) {
      if (hash) return big ? WalkStrings<uint64_t, kBigEndian, true>(a) : WalkStrings<uint64_t, kLittleEndian, true>(a);
      return big ? WalkStrings<uint64_t, kBigEndian, false>(a) : WalkStrings<uint64_t, kLittleEndian, false>(a);
    }
    if (hash) return big ? WalkStrings<uint32_t, kBigEndian, true>(a) : WalkStrings<uint32_t, kLittleEndian, true>(a);
    return big ? WalkStrings<uint32_t, kBigEndian, false>(a) : WalkStrings<uint32_t, kLittleEndian, false>(a);
  }
  static constexpr ByteOrder kBigEndian = ByteOrder::kBig;
  static constexpr ByteOrder kLittleEndian = ByteOrder::kLittle;

  bool WalkNestedArrays(const ArrayView& a, uint64_t array_at, uint32_t depth) {
    if (depth + 1 > limits().max_nesting_depth || depth + 1 > kHardMaxNestingDepth) {
      return Fail(RuleId::kNestingDepthLimit, array_at,
                  absl::StrCat("arrays nest deeper than the limit of ", limits().max_nesting_depth));
    }
    if (depth == 0) {
      sink_.Add(RuleId::kNestedArray, array_at, "array of arrays: ggml and llama.cpp refuse to load nested arrays");
    }
    for (uint64_t i = 0; i < a.count; ++i) {
      Value inner;
      inner.type = ValueType::kArray;
      if (!ReadArray(&inner, depth + 1)) return false;
    }
    return true;
  }

  bool ParseTensorInfos() {
    infos_start_ = r_.position();
    for (uint64_t i = 0; i < header().tensor_count; ++i) {
      TensorInfo t;
      uint64_t info_at = 0;
      if (!ReadString(&t.name, &info_at, "a tensor name")) return false;
      t.offset = static_cast<uint32_t>(info_at);  // checked against the header limit below
      t.length_size = static_cast<uint8_t>(length_size_);
      t.order = r_.order();
      uint64_t n_dims_at = r_.position();
      uint32_t n_dims = 0;
      if (!ReadU32(&n_dims, "n_dims")) return false;
      if (n_dims > kMaxDims) {
        // The record's length depends on n_dims: nothing after it can be
        // trusted, so parsing stops here.
        return Fail(RuleId::kTooManyDims, n_dims_at,
                    absl::StrCat("tensor '", EscapeForDisplay(t.name), "' has n_dims ", n_dims,
                                 "; ggml allows at most ", kMaxDims));
      }
      t.n_dims = n_dims;
      for (uint32_t d = 0; d < n_dims; ++d) {
        uint64_t dim = 0;  // read again from the buffer by TensorInfo::dims()
        if (!ReadLength(&dim, "a tensor dimension")) return false;
      }
      if (!ReadU32(&t.ggml_type, "a tensor type")) return false;
      uint64_t relative_offset = 0;  // TensorInfo::relative_offset() reads it back
      if (!ReadU64(&relative_offset, "a tensor data offset")) return false;
      // TensorInfo holds a 32-bit offset, as KeyValue does: no info may end
      // past the header limit.
      if (r_.position() > header_limit_) {
        return Fail(RuleId::kHeaderSizeLimit, 0,
                    absl::StrCat("header of at least ", r_.position(), " bytes exceeds the limit of ", header_limit_));
      }
      header().tensors.push_back(t);
    }
    return true;
  }

  void Finish() {
    header().infos_end = r_.position();
    if (header().infos_end > header_limit_) {
      Fail(RuleId::kHeaderSizeLimit, 0,
           absl::StrCat("header of ", header().infos_end, " bytes exceeds the limit of ", header_limit_));
      return;
    }
    // The layout follows from the finished header alone: derived here, once,
    // so that every reader of the view (rules, renderers, the C API) reads
    // the same facts and none computes or writes them (format/layout.h).
    DeriveLayout(header());
    result_.status = ParseStatus::kOk;
  }

  absl::Span<const uint8_t> bytes_;
  ByteReader r_;
  const ParseOptions& options_;
  FindingSink& sink_;
  ParseResult result_;
  uint32_t length_size_ = 8;
  uint64_t kvs_start_ = 0;    // where the first KV starts
  uint64_t infos_start_ = 0;  // where the first tensor info starts
  uint64_t min_end_ = 0;      // the header's end if every KV and info took its minimum size
  // False while a prefix parses on past counts whose minimum size it does
  // not hold: any error then asks for more bytes (Fail).
  bool counts_proven_ = true;
  StringArrayScreen* const screen_ = options_.screen;
  bool hash_this_array_ = false;  // the KV being read is the one screen_ asks for
  bool hashed_key_seen_ = false;
  // The policy's header limit, and never past what KeyValue can address.
  static_assert(kHardMaxHeaderBytes <= KeyValue::kMaxHeaderPosition);
  static_assert(kHardMaxHeaderBytes <= UINT32_MAX, "TensorInfo::offset is 32 bits");
  const uint64_t header_limit_ = std::min(options_.limits.max_header_bytes, kHardMaxHeaderBytes);
};

ParseResult ParseHeader(absl::Span<const uint8_t> bytes, const ParseOptions& options, FindingSink& sink) {
  return Parser(bytes, options, sink).Run();
}

}  // namespace ggufguard
