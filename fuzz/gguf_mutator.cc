#include "fuzz/gguf_mutator.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string_view>

#include "ggufguard/format/ggml_type.h"
#include "ggufguard/format/header.h"
#include "ggufguard/format/value_type.h"
#include "ggufguard/parse/parser.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/findings/policy.h"

namespace ggufguard::fuzz {
namespace {

constexpr size_t kSampledElements = 48;  // per array, for targeted mutation
constexpr size_t kMaxAllFields = 1 << 20;

void AddField(GgufLayout& L, uint64_t offset, uint8_t width, FieldKind kind, bool sampled = true) {
  if (sampled) L.fields.push_back(Field{offset, width, kind});
  if (width > 1 && L.all_fields.size() < kMaxAllFields) L.all_fields.push_back(Field{offset, width, kind});
}

uint64_t ReadUint(const uint8_t* p, uint8_t width, ByteOrder order) {
  switch (width) {
    case 1: return p[0];
    case 2: return LoadUnsigned<uint16_t>(p, order);
    case 4: return LoadUnsigned<uint32_t>(p, order);
    default: return LoadUnsigned<uint64_t>(p, order);
  }
}

void WriteUint(uint8_t* p, uint8_t width, uint64_t v, ByteOrder order) {
  for (uint8_t i = 0; i < width; ++i) {
    const uint8_t byte = static_cast<uint8_t>(v >> (8 * i));
    p[order == ByteOrder::kLittle ? i : width - 1 - i] = byte;
  }
}

// The elements of a string or fixed-size array: a sample for targeted
// mutation (every k-th), all of them for the byte-order flip.
void MapArray(GgufLayout& L, const ArrayView& a, absl::Span<const uint8_t> bytes) {
  const uint64_t stride = a.count > kSampledElements ? (a.count + kSampledElements - 1) / kSampledElements : 1;
  if (a.element_type == ValueType::kString) {
    uint64_t pos = a.elements_offset;
    for (uint64_t i = 0; i < a.count; ++i) {
      if (pos + a.length_size > bytes.size()) return;  // the parser proved the walk; defensive
      const uint64_t len = ReadUint(bytes.data() + pos, static_cast<uint8_t>(a.length_size), a.order);
      const bool sample = i % stride == 0;
      AddField(L, pos, static_cast<uint8_t>(a.length_size), FieldKind::kLength, sample);
      if (len > bytes.size() - pos - a.length_size) return;
      if (sample) L.strings.push_back(StringRegion{pos + a.length_size, pos + a.length_size + len, pos});
      pos += a.length_size + len;
    }
    return;
  }
  const uint32_t w = ScalarSize(a.element_type);
  if (w == 0) return;
  for (uint64_t i = 0; i < a.count; ++i) {
    AddField(L, a.elements_offset + i * w, static_cast<uint8_t>(w), FieldKind::kScalar, i % stride == 0);
  }
}

}  // namespace

GgufLayout MapGguf(absl::Span<const uint8_t> bytes) {
  GgufLayout L;
  static const Policy policy = DefaultPolicy();
  FindingSink sink(policy);
  ParseResult r = ParseHeader(bytes, ParseOptions{policy.limits, /*complete=*/true}, sink);
  const GgufHeader& h = r.header;
  if (h.version < 1 || h.version > 3 || bytes.size() < 8) return L;
  L.gguf = true;
  L.parsed = r.status == ParseStatus::kOk;
  L.order = h.byte_order;
  L.version = h.version;
  L.length_size = h.version == 1 ? 4 : 8;
  const auto ls = static_cast<uint8_t>(L.length_size);
  AddField(L, 4, 4, FieldKind::kVersion);
  L.tensor_count_field = 8;
  L.kv_count_field = 8 + ls;
  if (bytes.size() >= 8 + 2 * uint64_t{ls}) {
    AddField(L, L.tensor_count_field, ls, FieldKind::kCount);
    AddField(L, L.kv_count_field, ls, FieldKind::kCount);
  }
  L.kvs_end = 8 + 2 * uint64_t{ls};
  bool nested = false;
  for (const KeyValue& kv : h.kvs) {
    AddField(L, kv.offset(), ls, FieldKind::kLength);
    L.strings.push_back(StringRegion{kv.key_offset(), kv.key_offset() + kv.key().size(), kv.offset()});
    AddField(L, kv.type_offset(), 4, FieldKind::kValueType);
    const Value v = kv.value();
    const uint64_t end = v.offset + v.bytes.size();
    switch (v.type) {
      case ValueType::kString:
        AddField(L, v.offset - ls, ls, FieldKind::kLength);
        L.strings.push_back(StringRegion{v.offset, end, v.offset - ls});
        break;
      case ValueType::kArray:
        AddField(L, kv.type_offset() + 4, 4, FieldKind::kArrayType);
        AddField(L, kv.type_offset() + 8, ls, FieldKind::kArrayCount);
        if (v.array.element_type == ValueType::kArray) {
          nested = true;
        } else {
          MapArray(L, v.array, bytes);
        }
        break;
      default: {
        const auto w = static_cast<uint8_t>(ScalarSize(v.type));
        const bool alignment = kv.key() == "general.alignment" && v.type == ValueType::kUint32;
        AddField(L, v.offset, w, alignment ? FieldKind::kAlignment : FieldKind::kScalar);
        L.scalar_kvs.push_back(ScalarKv{kv.type_offset(), w});
        if (alignment) {
          const uint64_t a = *v.AsUnsigned();
          if (a != 0 && (a & (a - 1)) == 0) L.alignment = a;
        }
        break;
      }
    }
    L.kvs.push_back(Record{kv.offset(), end});
    L.kvs_end = end;
  }
  L.infos_end = L.kvs_end;
  for (const TensorInfo& t : h.tensors) {
    AddField(L, t.offset, ls, FieldKind::kLength);
    L.strings.push_back(StringRegion{t.name_offset(), t.name_offset() + t.name.size(), t.offset});
    const uint64_t n_dims_at = t.n_dims_offset();
    AddField(L, n_dims_at, 4, FieldKind::kNDims);
    for (uint32_t d = 0; d < t.n_dims; ++d) AddField(L, n_dims_at + 4 + uint64_t{d} * ls, ls, FieldKind::kDim);
    AddField(L, t.type_offset(), 4, FieldKind::kGgmlType);
    AddField(L, t.relative_offset_field(), 8, FieldKind::kTensorOffset);
    L.tensor_offset_fields.push_back(t.relative_offset_field());
    L.tensors.push_back(Record{t.offset, t.relative_offset_field() + 8});
    L.infos_end = t.relative_offset_field() + 8;
  }
  L.data_offset = (L.infos_end + L.alignment - 1) / L.alignment * L.alignment;
  L.complete = L.parsed && !nested && L.all_fields.size() < kMaxAllFields;
  return L;
}

namespace {

class Mutator {
 public:
  Mutator(std::vector<uint8_t>& buf, unsigned int seed) : buf_(buf), rng_(seed) {}

  // One mutation; false when nothing applied (the caller tries another).
  bool MutateOnce() {
    L_ = MapGguf(buf_);
    if (!L_.gguf || L_.fields.empty()) return false;
    switch (Rand(20)) {
      case 0: case 1: case 2: case 3: case 4: case 5: case 6:
        return MutateIntField();
      case 7: case 8:
        return MutateStringByte();
      case 9:
        return ResizeString();
      case 10:
        return DuplicateRecord(L_.kvs, L_.kv_count_field, /*kv=*/true);
      case 11:
        return RemoveRecord(L_.kvs, L_.kv_count_field);
      case 12:
        return Rand(2) ? DuplicateRecord(L_.tensors, L_.tensor_count_field, /*kv=*/false)
                       : RemoveRecord(L_.tensors, L_.tensor_count_field);
      case 13:
        return RetypeScalarKv();
      case 14:
        return SwapTensorOffsets();
      case 15:
        return Truncate();
      case 16:
        return AppendBytes();
      case 17:
        return InsertKv();
      case 18:
        return FlipByteOrder();
      default:
        return MutateIntField();
    }
  }

 private:
  uint64_t Rand(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[Rand(v.size())]; }

  uint64_t Read(const Field& f) const { return ReadUint(buf_.data() + f.offset, f.width, L_.order); }
  void Write(uint64_t offset, uint8_t width, uint64_t v) { WriteUint(buf_.data() + offset, width, v, L_.order); }
  void WriteLength(uint64_t offset, uint64_t v) { Write(offset, static_cast<uint8_t>(L_.length_size), v); }
  void AddToCount(uint64_t field, int64_t delta) {
    const auto w = static_cast<uint8_t>(L_.length_size);
    if (field + w > buf_.size()) return;
    Write(field, w, ReadUint(buf_.data() + field, w, L_.order) + static_cast<uint64_t>(delta));
  }

  // The values attackers pick: boundaries of the field's width and of the
  // file, off-by-ones, wraps, and values that mean something to the field.
  uint64_t Interesting(const Field& f, uint64_t v) {
    const uint64_t max = f.width == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * f.width)) - 1;
    const uint64_t size = buf_.size();
    switch (f.kind) {
      case FieldKind::kValueType:
      case FieldKind::kArrayType: {
        static constexpr uint64_t kTypes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 255, 0xFFFFFFFF, 0x09000000};
        return kTypes[Rand(std::size(kTypes))];
      }
      case FieldKind::kGgmlType: {
        // Removed, intermediate and the newest ids, the first unknown ones, and far ones.
        static constexpr uint64_t kOdd[] = {4, 5, 9, 15, 31, 36, 38, 39, 40, 41, 42, kFirstUnknownGgmlType,
                                            kFirstUnknownGgmlType + 1, 255, 0x80000000, 0xFFFFFFFF};
        return Rand(2) ? Rand(kFirstUnknownGgmlType) : kOdd[Rand(std::size(kOdd))];
      }
      case FieldKind::kNDims: {
        static constexpr uint64_t kDims[] = {0, 1, 2, 3, 4, 5, 8, 0x80000000, 0xFFFFFFFF};
        return kDims[Rand(std::size(kDims))];
      }
      case FieldKind::kVersion: {
        static constexpr uint64_t kVersions[] = {0, 1, 2, 3, 4, 0xFFFF, 0x10000, 0x03000000, 0x00030000};
        return kVersions[Rand(std::size(kVersions))];
      }
      case FieldKind::kAlignment: {
        static constexpr uint64_t kAlign[] = {0, 1, 2, 3, 4, 8, 16, 24, 31, 33, 48, 64, 128, 4096, uint64_t{1} << 20,
                                              (uint64_t{1} << 20) + 1, uint64_t{1} << 21, uint64_t{1} << 31,
                                              0xFFFFFFFF};
        return kAlign[Rand(std::size(kAlign))];
      }
      case FieldKind::kTensorOffset:
        switch (Rand(8)) {
          case 0: return L_.tensor_offset_fields.empty() ? 0 : ReadUint(buf_.data() + Pick(L_.tensor_offset_fields), 8, L_.order);
          case 1: return v + L_.alignment * (Rand(2) ? 1 : uint64_t(-1));
          case 2: return uint64_t{0} - L_.data_offset;  // data_offset + offset wraps to 0
          case 3: return uint64_t{0} - L_.data_offset + size;  // wraps to the file's end
          case 4: return size > L_.data_offset ? size - L_.data_offset : 0;  // the end of the data
          default: break;
        }
        break;
      case FieldKind::kDim:
        switch (Rand(6)) {
          case 0: return Rand(2) ? 31 + Rand(3) : 255 + Rand(3);  // around block sizes
          case 1: return uint64_t{1} << (31 + Rand(33));          // 2^31 .. 2^63
          case 2: return uint64_t{1} << (16 + Rand(16));
          default: break;
        }
        break;
      case FieldKind::kLength:
      case FieldKind::kArrayCount:
        switch (Rand(6)) {
          case 0: return size > f.offset + f.width ? size - f.offset - f.width : 0;  // exactly the rest
          case 1: return size - f.offset - f.width + 1;  // one past the end
          case 2: return (uint64_t{1} << 30) + Rand(2);  // the policy limit and one more
          default: break;
        }
        break;
      case FieldKind::kCount:
        if (Rand(3) == 0) return (uint64_t{1} << 20) + Rand(2);  // the policy limit and one more
        break;
      default:
        break;
    }
    switch (Rand(16)) {
      case 0: return v + 1;
      case 1: return v - 1;
      case 2: return 0;
      case 3: return 1;
      case 4: return max;
      case 5: return max >> 1;                              // 2^31-1, 2^63-1
      case 6: return (max >> 1) + 1;                        // 2^31, 2^63
      case 7: return uint64_t{1} << 31;
      case 8: return uint64_t{1} << 32;
      case 9: return uint64_t{0} - v;                       // wrap
      case 10: return v ^ (uint64_t{1} << Rand(8 * f.width));
      case 11: return v * 2;
      case 12: return v / 2;
      case 13: return size;
      case 14: return Rand(256);
      default: return static_cast<uint64_t>(rng_());
    }
  }

  bool MutateIntField() {
    const Field f = Pick(L_.fields);
    if (f.offset + f.width > buf_.size()) return false;
    Write(f.offset, f.width, Interesting(f, Read(f)));
    return true;
  }

  // A byte of a key, value, token or name turned into what breaks readers:
  // NUL, a control byte, a lone continuation byte, an overlong or surrogate
  // lead, a case flip (key collisions), a dot (empty segments), a space.
  bool MutateStringByte() {
    std::vector<StringRegion> nonempty;
    for (const StringRegion& s : L_.strings) {
      if (s.end > s.begin && s.end <= buf_.size()) nonempty.push_back(s);
    }
    if (nonempty.empty()) return false;
    const StringRegion s = Pick(nonempty);
    const uint64_t at = s.begin + Rand(s.end - s.begin);
    uint8_t& b = buf_[at];
    switch (Rand(12)) {
      case 0: b = 0x00; break;
      case 1: b = 0xFF; break;
      case 2: b = 0x80; break;
      case 3: b = 0xC0; break;                        // overlong lead
      case 4: b = 0xED; break;                        // surrogate lead (with a following A0..BF)
      case 5: b = 0xF4; break;                        // U+10FFFF and above
      case 6: b = static_cast<uint8_t>(Rand(0x20)); break;
      case 7: b = 0x7F; break;
      case 8: b = (b >= 'a' && b <= 'z') ? b - 32 : (b >= 'A' && b <= 'Z') ? b + 32 : b ^ 0x20; break;
      case 9: b = '.'; break;
      case 10: b = ' '; break;
      default:  // a valid but non-ASCII sequence cut short or completed
        if (at + 1 < s.end) {
          b = 0xC3;
          buf_[at + 1] = Rand(2) ? 0xA9 : 0x28;
        } else {
          b = 0xE2;
        }
        break;
    }
    return true;
  }

  // Grow or shrink a string and fix its length: the file stays well formed
  // but everything after it moves (data offsets, alignment padding). Growth
  // inserts random bytes or a fragment the semantic rules react to.
  bool ResizeString() {
    if (L_.strings.empty()) return false;
    const StringRegion s = Pick(L_.strings);
    if (s.end > buf_.size() || s.length_field + L_.length_size > buf_.size()) return false;
    const uint64_t len = s.end - s.begin;
    if (Rand(2) && len > 0) {
      const uint64_t n = 1 + Rand(std::min<uint64_t>(len, Rand(4) ? 8 : len));
      const uint64_t at = s.begin + Rand(len - n + 1);
      buf_.erase(buf_.begin() + at, buf_.begin() + at + n);
      WriteLength(s.length_field, len - n);
    } else if (Rand(3) == 0) {
      // A fragment the semantic rules look for: Jinja syntax and sandbox
      // escapes for chat templates, byte tokens and the SentencePiece marker
      // for vocabularies, separators for keys.
      static constexpr std::string_view kFragments[] = {
          "{{ ", " }}", "{% ", " %}", "{# ", "__class__", "__globals__", "._private", "|attr('x')", "lipsum.",
          "cycler[", "{% macro m() %}{{ m() }}{% endmacro %}", "{% for x in y %}", "{% endfor %}", "(((((", "'",
          "os.popen", "self", "<0x0A>", "<0xZZ>", "\xE2\x96\x81", ".", "..", " ", "\t"};
      const std::string_view f = kFragments[Rand(std::size(kFragments))];
      const uint64_t at = s.begin + Rand(len + 1);
      buf_.insert(buf_.begin() + at, f.begin(), f.end());
      WriteLength(s.length_field, len + f.size());
    } else {
      const uint64_t n = Rand(4) ? 1 + Rand(8) : 1 + Rand(128);
      const uint64_t at = s.begin + Rand(len + 1);
      const uint8_t fill = Rand(2) ? static_cast<uint8_t>('a' + Rand(26)) : static_cast<uint8_t>(rng_());
      buf_.insert(buf_.begin() + at, n, fill);
      WriteLength(s.length_field, len + n);
    }
    return true;
  }

  // A KV or tensor info repeated right after itself (or at the end of its
  // list), optionally with one key byte case-flipped so that it collides
  // rather than repeats; the count grows by one.
  bool DuplicateRecord(const std::vector<Record>& records, uint64_t count_field, bool kv) {
    if (records.empty()) return false;
    const Record r = Pick(records);
    if (r.end > buf_.size()) return false;
    std::vector<uint8_t> copy(buf_.begin() + r.begin, buf_.begin() + r.end);
    if (kv && Rand(3) == 0 && copy.size() > L_.length_size) {
      const uint64_t key_len = ReadUint(copy.data(), static_cast<uint8_t>(L_.length_size), L_.order);
      if (key_len > 0 && key_len <= copy.size() - L_.length_size) {
        uint8_t& c = copy[L_.length_size + Rand(key_len)];
        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') c ^= 0x20;
      }
    }
    const uint64_t at = Rand(2) ? r.end : records.back().end;
    buf_.insert(buf_.begin() + at, copy.begin(), copy.end());
    AddToCount(count_field, 1);
    return true;
  }

  bool RemoveRecord(const std::vector<Record>& records, uint64_t count_field) {
    if (records.empty()) return false;
    const Record r = Pick(records);
    if (r.end > buf_.size()) return false;
    buf_.erase(buf_.begin() + r.begin, buf_.begin() + r.end);
    AddToCount(count_field, -1);
    return true;
  }

  // A scalar KV re-encoded as another scalar type (u32 -> u64, i8, f32...),
  // payload resized: general.alignment as u64 is the classic.
  bool RetypeScalarKv() {
    if (L_.scalar_kvs.empty()) return false;
    const ScalarKv s = Pick(L_.scalar_kvs);
    if (s.type_field + 4 + s.width > buf_.size()) return false;
    static constexpr uint32_t kScalarTypes[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12};
    const uint32_t type = kScalarTypes[Rand(std::size(kScalarTypes))];
    const auto width = static_cast<uint8_t>(ScalarSize(static_cast<ValueType>(type)));
    const uint64_t v = ReadUint(buf_.data() + s.type_field + 4, s.width, L_.order);
    Write(s.type_field, 4, type);
    const uint64_t payload = s.type_field + 4;
    if (width > s.width) {
      buf_.insert(buf_.begin() + payload + s.width, width - s.width, 0);
    } else if (width < s.width) {
      buf_.erase(buf_.begin() + payload + width, buf_.begin() + payload + s.width);
    }
    Write(payload, width, v);
    return true;
  }

  bool SwapTensorOffsets() {
    if (L_.tensor_offset_fields.size() < 2) return false;
    const uint64_t a = Pick(L_.tensor_offset_fields), b = Pick(L_.tensor_offset_fields);
    if (a == b || a + 8 > buf_.size() || b + 8 > buf_.size()) return false;
    std::swap_ranges(buf_.begin() + a, buf_.begin() + a + 8, buf_.begin() + b);
    return true;
  }

  // Cut at a field, inside a field, in the header padding or in the data.
  bool Truncate() {
    if (buf_.size() < 2) return false;
    uint64_t cut;
    switch (Rand(3)) {
      case 0: {
        const Field f = Pick(L_.fields);
        cut = f.offset + Rand(f.width);
        break;
      }
      case 1:
        cut = L_.infos_end + Rand(L_.alignment + 1);
        break;
      default:
        cut = buf_.size() - 1 - Rand(std::min<uint64_t>(buf_.size() - 1, 256));
        break;
    }
    if (cut >= buf_.size()) return false;
    buf_.resize(cut);
    return true;
  }

  // Trailing bytes: zeros (padding the validator should accept up to the
  // alignment), or a second format's magic (polyglot).
  bool AppendBytes() {
    static constexpr std::string_view kMagics[] = {"PK\x03\x04", "\x7f" "ELF", "%PDF-1.7", "\x89PNG\r\n\x1a\n"};
    if (Rand(2)) {
      // Up to one alignment unit, capped: general.alignment may say 2^31.
      buf_.insert(buf_.end(), 1 + Rand(Rand(2) ? std::min<uint64_t>(L_.alignment, 4096) : 8), 0);
    } else {
      std::string_view m = kMagics[Rand(std::size(kMagics))];
      buf_.insert(buf_.end(), m.begin(), m.end());
    }
    return true;
  }

  // A new KV at the front: general.alignment with a hostile value or type,
  // or a key that other readers fold onto a standard one.
  bool InsertKv() {
    if (L_.kv_count_field + L_.length_size > buf_.size()) return false;
    using namespace std::string_view_literals;
    static constexpr std::string_view kKeys[] = {"general.alignment"sv, "general.alignment"sv, "General.Alignment"sv,
                                                 "general.alignment\0x"sv, " general.architecture"sv,
                                                 "general.architecture"sv, "tokenizer.ggml.tokens"sv};
    const std::string_view key = kKeys[Rand(std::size(kKeys))];
    // Mostly u32 (the type general.alignment must have), else any scalar.
    static constexpr uint32_t kScalarTypes[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12};
    const uint32_t type = Rand(4) ? 4 : kScalarTypes[Rand(std::size(kScalarTypes))];
    const auto width = static_cast<uint8_t>(ScalarSize(static_cast<ValueType>(type)));
    static constexpr uint64_t kValues[] = {0, 1, 3, 8, 16, 32, 64, 4096, uint64_t{1} << 20, uint64_t{1} << 21,
                                           uint64_t{1} << 31};
    std::vector<uint8_t> kv(L_.length_size + key.size() + 4 + width);
    WriteUint(kv.data(), static_cast<uint8_t>(L_.length_size), key.size(), L_.order);
    std::memcpy(kv.data() + L_.length_size, key.data(), key.size());
    WriteUint(kv.data() + L_.length_size + key.size(), 4, type, L_.order);
    WriteUint(kv.data() + L_.length_size + key.size() + 4, width, kValues[Rand(std::size(kValues))], L_.order);
    const uint64_t at = L_.kv_count_field + L_.length_size;
    buf_.insert(buf_.begin() + at, kv.begin(), kv.end());
    AddToCount(L_.kv_count_field, 1);
    return true;
  }

  // Little-endian <-> big-endian: every multi-byte header field swapped.
  // Tensor data is left as is (ggufguard never reads it but for padding).
  bool FlipByteOrder() {
    if (!L_.complete) return false;
    for (const Field& f : L_.all_fields) {
      if (f.offset + f.width <= buf_.size()) std::reverse(buf_.begin() + f.offset, buf_.begin() + f.offset + f.width);
    }
    return true;
  }

  std::vector<uint8_t>& buf_;
  std::mt19937_64 rng_;
  GgufLayout L_;
};

}  // namespace

size_t MutateGguf(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::vector<uint8_t> buf(data, data + size);
  Mutator m(buf, seed);
  std::minstd_rand stack(seed ^ 0x5bd1e995u);
  const int wanted = stack() % 4 == 0 ? 2 + static_cast<int>(stack() % 2) : 1;
  int done = 0;
  for (int attempt = 0; attempt < 8 && done < wanted; ++attempt) done += m.MutateOnce() ? 1 : 0;
  if (done == 0) return 0;
  if (buf.size() > max_size) buf.resize(max_size);
  if (buf.empty()) return 0;
  std::memcpy(data, buf.data(), buf.size());
  return buf.size();
}

}  // namespace ggufguard::fuzz

// libFuzzer's byte-level mutator; absent (null) in replay builds.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) __attribute__((weak));

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  // One call in five stays byte-level: the structure-aware mutations cannot
  // reach everything (bytes of tensor data, a magic one bit off).
  if (seed % 5 != 0 || LLVMFuzzerMutate == nullptr) {
    const size_t n = ggufguard::fuzz::MutateGguf(data, size, max_size, seed);
    if (n != 0 || LLVMFuzzerMutate == nullptr) return n != 0 ? n : size;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
