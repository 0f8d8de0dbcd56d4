// The parsed GGUF header: a borrowed view of the caller's bytes.
//
// Nothing here owns file bytes. Keys, names and string values are
// string_views into the buffer that was parsed; arrays keep only their byte
// range and are decoded on demand. Every item carries its file offset so that
// findings can point at the exact byte. The buffer must outlive the view.
#ifndef GGUFGUARD_FORMAT_HEADER_H_
#define GGUFGUARD_FORMAT_HEADER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "ggufguard/base/page_buffer.h"
#include "ggufguard/format/value_type.h"
#include "ggufguard/io/byte_reader.h"

namespace ggufguard {

inline constexpr uint32_t kMaxDims = 4;               // GGML_MAX_DIMS
inline constexpr uint64_t kDefaultAlignment = 32;     // GGUF_DEFAULT_ALIGNMENT

inline std::string_view AsStringView(absl::Span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// An array value: its element type, count and the bytes of its elements.
struct ArrayView {
  ValueType element_type = ValueType::kUint8;
  uint32_t element_type_raw = 0;
  uint64_t count = 0;
  uint64_t elements_offset = 0;               // file offset of the first element
  absl::Span<const uint8_t> element_bytes;    // every element, length prefixes included
  uint32_t length_size = 8;                   // width of string lengths (4 in v1)
  ByteOrder order = ByteOrder::kLittle;
  // Gathered by the parser's bounds walk over a string array, so that content
  // rules can check all strings in one pass without walking them again. In
  // a view from KeyValue::value() the longest length is capped at
  // kLongestStringCap.
  uint64_t max_string_length = 0;
  uint64_t empty_strings = 0;

  // Fixed-size elements: the i-th element's bytes. Caller checks i < count.
  template <typename T>
  T ScalarAt(uint64_t i) const {
    return LoadUnsigned<T>(element_bytes.data() + i * sizeof(T), order);
  }

  // A string array's strings [0, min(end, count)) in order, as
  // f(index, contents, file offset of the contents); false if f returns
  // false. Every read is bounds-checked; the parser proved the walk, so
  // running out of bytes (false as well) means a view it did not make.
  // The one walk over string elements outside the parser.
  template <typename F>
  bool ForEachString(uint64_t end, F&& f) const {
    ByteReader r(element_bytes, order);
    for (uint64_t i = 0; i < end && i < count; ++i) {
      uint64_t len = 0;
      if (length_size == 8) {
        if (!r.ReadU64(&len)) return false;
      } else {
        uint32_t len32 = 0;
        if (!r.ReadU32(&len32)) return false;
        len = len32;
      }
      const uint64_t at = elements_offset + r.position();
      absl::Span<const uint8_t> s;
      if (!r.ReadBytes(len, &s)) return false;
      if (!f(i, AsStringView(s), at)) return false;
    }
    return true;
  }
};

// One metadata value. For scalars `bytes` holds the value's encoded bytes, for
// strings the string's contents (without the length), for arrays everything
// after the array header (same as array.element_bytes).
struct Value {
  ValueType type = ValueType::kUint8;
  ByteOrder order = ByteOrder::kLittle;
  uint64_t offset = 0;  // file offset of `bytes`
  absl::Span<const uint8_t> bytes;
  ArrayView array;      // meaningful only when type == kArray

  std::string_view AsString() const { return AsStringView(bytes); }
  // Integer types widened; nullopt for non-integer types. Booleans read as 0/1+.
  std::optional<uint64_t> AsUnsigned() const;
  std::optional<int64_t> AsSigned() const;
  std::optional<double> AsDouble() const;  // f32/f64 only
};

// What KeyValue keeps of a string array's longest string: its length up to
// this, and this for any longer one. The rules ask only whether every string
// is shorter than 128 or 256 bytes (a length field of ASCII or of one
// non-zero byte), far below it.
inline constexpr uint64_t kLongestStringCap = UINT16_MAX;

// One metadata KV, kept compact (24 bytes): a header may hold a million KVs,
// and every rule pass streams the whole vector, so its size decides the
// validator's memory and much of its time on hostile headers
// (docs/performance.md, "Hostile headers"). Everything a rule reads is
// derived from these fields and the bytes they point into: the key's length
// is read back from its length field, which the parser proved present just
// before the key. Positions and sizes fit 32 bits because the parser refuses
// a header that reaches past kMaxHeaderPosition.
class KeyValue {
 public:
  // Positions past this one are refused by the parser (GG1007 header-size-
  // limit), whatever a policy says: 4 GiB - 1.
  static constexpr uint64_t kMaxHeaderPosition = UINT32_MAX;

  KeyValue() = default;
  // `key` points into the parsed buffer, just after its length field of
  // `length_size` bytes in `order`; `offset` is where the KV starts (that
  // length field); `value_size` is the size of Value::bytes. The caller
  // (the parser) has proven every position below kMaxHeaderPosition and
  // that an array's count field follows its element type.
  KeyValue(std::string_view key, uint64_t offset, uint32_t length_size, ByteOrder order, ValueType type,
           ValueType element_type, uint64_t value_size)
      : key_data_(key.data()),
        offset_(static_cast<uint32_t>(offset)),
        value_size_(static_cast<uint32_t>(value_size)),
        types_(static_cast<uint8_t>(static_cast<uint32_t>(type) | static_cast<uint32_t>(element_type) << 4)),
        flags_(static_cast<uint8_t>((length_size == 4 ? kFourByteLengths : 0) |
                                    (order == ByteOrder::kBig ? kBigEndian : 0))) {}

  std::string_view key() const { return {key_data_, KeySize()}; }
  uint64_t offset() const { return offset_; }  // where the KV starts: its key's length field
  uint64_t key_offset() const { return uint64_t{offset_} + length_size(); }  // the key's first byte
  uint64_t type_offset() const { return key_offset() + KeySize(); }         // the value type id
  ValueType type() const { return static_cast<ValueType>(types_ & 0x0F); }
  // The value, decoded from the buffer on each call (cheap: no copy of
  // its bytes).
  Value value() const;

  // Statistics of a string array's lengths, gathered by the parser's bounds
  // walk (ArrayView::max_string_length, capped at kLongestStringCap, and
  // empty_strings).
  void set_string_stats(uint64_t longest, uint64_t empties) {
    longest_string_ = static_cast<uint16_t>(longest < kLongestStringCap ? longest : kLongestStringCap);
    empty_strings_ = static_cast<uint32_t>(empties);
  }

 private:
  static constexpr uint8_t kFourByteLengths = 1;  // GGUF v1
  static constexpr uint8_t kBigEndian = 2;

  uint32_t length_size() const { return (flags_ & kFourByteLengths) != 0 ? 4 : 8; }
  ByteOrder order() const { return (flags_ & kBigEndian) != 0 ? ByteOrder::kBig : ByteOrder::kLittle; }
  ValueType element_type() const { return static_cast<ValueType>(types_ >> 4); }
  // The key's length field, read back (it is below 2^32: the key lies in
  // the header).
  uint32_t KeySize() const {
    if (key_data_ == nullptr) return 0;
    const uint8_t* field = reinterpret_cast<const uint8_t*>(key_data_) - length_size();
    return static_cast<uint32_t>((flags_ & kFourByteLengths) != 0 ? LoadUnsigned<uint32_t>(field, order())
                                                                   : LoadUnsigned<uint64_t>(field, order()));
  }
  // From the value type id to the value's bytes: the type id, then for a
  // string its length, for an array its element type and count.
  uint64_t ValueHeaderSize() const {
    if (type() == ValueType::kString) return 4 + uint64_t{length_size()};
    if (type() == ValueType::kArray) return 4 + 4 + uint64_t{length_size()};
    return 4;
  }

  const char* key_data_ = nullptr;
  uint32_t offset_ = 0;
  uint32_t value_size_ = 0;
  uint32_t empty_strings_ = 0;   // string arrays only
  uint16_t longest_string_ = 0;  // string arrays only, capped at kLongestStringCap
  uint8_t types_ = 0;            // the ValueType (low 4 bits: 0..12) and, for an array, its element's (high 4)
  uint8_t flags_ = 0;            // kFourByteLengths, kBigEndian
};

// The value when `kv` is there and holds exactly a u16, the type llama.cpp
// demands of split.no and split.count (another type is GG4004's business).
std::optional<uint64_t> ExactU16(const KeyValue* kv);

inline Value KeyValue::value() const {
  static_assert(sizeof(KeyValue) <= 24, "KeyValue is kept compact: see header.h");
  static_assert(kValueTypeCount <= 16, "KeyValue keeps a value type in 4 bits");
  Value v;
  v.type = type();
  v.order = order();
  const uint64_t value_header = ValueHeaderSize();
  const uint32_t key_size = KeySize();
  v.offset = uint64_t{offset_} + length_size() + key_size + value_header;
  const uint8_t* type_field = reinterpret_cast<const uint8_t*>(key_data_) + key_size;
  v.bytes = absl::Span<const uint8_t>(type_field + value_header, value_size_);
  if (v.type == ValueType::kArray) {
    ArrayView& a = v.array;
    a.element_type = element_type();
    a.element_type_raw = static_cast<uint32_t>(a.element_type);
    const uint8_t* count_field = type_field + 4 + 4;
    a.count = length_size() == 8 ? LoadUnsigned<uint64_t>(count_field, v.order)
                                 : LoadUnsigned<uint32_t>(count_field, v.order);
    a.elements_offset = v.offset;
    a.element_bytes = v.bytes;
    a.length_size = length_size();
    a.order = v.order;
    a.max_string_length = longest_string_;
    a.empty_strings = empty_strings_;
  }
  return v;
}

// One tensor info, kept compact (48 bytes, was 144) for the same reason as
// KeyValue: a header may hold a million of them (docs/performance.md,
// "Hostile headers"). The parser stores what it read; the positions of the
// record's fields, its dimensions and its data offset are derived from
// them and read from the bytes `name` points into, which the parser proved
// to be there. The record: name (length, bytes), n_dims (u32), n_dims
// dimensions (u64; u32 in v1), ggml type (u32), data offset (u64).
struct TensorInfo {
  std::string_view name;  // points into the parsed buffer
  // Computed by the tensor rules with checked arithmetic: the size valid only
  // when `size_known` (known type, no overflow, row a multiple of the
  // block), the absolute offset (by the layout rule) only when
  // `absolute_known`.
  uint64_t byte_size = 0;
  uint64_t absolute_offset = 0;  // data_offset + relative_offset()
  uint32_t offset = 0;           // file offset of the info record (its name length)
  uint32_t ggml_type = 0;
  uint32_t n_dims = 0;  // at most kMaxDims: the parser stops at a larger one
  uint8_t length_size = 8;  // width of the name's length and of each dimension: 4 in v1
  ByteOrder order = ByteOrder::kLittle;
  bool size_known = false;
  bool absolute_known = false;

  uint64_t name_offset() const { return uint64_t{offset} + length_size; }  // the name's first byte
  uint64_t n_dims_offset() const { return name_offset() + name.size(); }
  uint64_t type_offset() const { return n_dims_offset() + 4 + uint64_t{length_size} * n_dims; }
  uint64_t relative_offset_field() const { return type_offset() + 4; }  // the data offset's field
  // Raw dimensions as written; unused ones are 1.
  std::array<uint64_t, kMaxDims> dims() const {
    std::array<uint64_t, kMaxDims> out = {1, 1, 1, 1};
    const uint8_t* p = DimsField();
    for (uint32_t d = 0; d < n_dims && d < kMaxDims; ++d, p += length_size) {
      out[d] = length_size == 8 ? LoadUnsigned<uint64_t>(p, order) : LoadUnsigned<uint32_t>(p, order);
    }
    return out;
  }
  // The data offset as written: relative to the data section.
  uint64_t relative_offset() const {
    return LoadUnsigned<uint64_t>(DimsField() + uint64_t{length_size} * n_dims + 4, order);
  }

 private:
  const uint8_t* DimsField() const { return reinterpret_cast<const uint8_t*>(name.data()) + name.size() + 4; }
};
static_assert(sizeof(TensorInfo) <= 48, "TensorInfo is kept compact: see above");

struct GgufHeader {
  ByteOrder byte_order = ByteOrder::kLittle;
  uint32_t version = 0;
  uint64_t tensor_count = 0;
  uint64_t kv_count = 0;
  // File order. Huge pages for a large header (base/page_buffer.h).
  std::vector<KeyValue, PageAllocator<KeyValue>> kvs;
  std::vector<TensorInfo, PageAllocator<TensorInfo>> tensors;
  uint64_t infos_end = 0;          // file offset just past the last tensor info
  // The layout, derived by the parser once the header parses
  // (format/layout.h); the rules only read it.
  uint64_t alignment = kDefaultAlignment;  // effective (valid general.alignment or 32)
  bool data_offset_known = false;
  uint64_t data_offset = 0;        // infos_end rounded up to the alignment
  // Where the data section ends when the header alone fixes it (every
  // tensor's extent known): the furthest tensor end, aligned up.
  bool data_end_known = false;
  uint64_t data_end = 0;
  // The tensors whose extent is known (TensorExtent), by where their data
  // starts, ties in file order: file order itself when
  // extents_in_file_order (nearly every file; nothing stored), else
  // extents_by_start (ForEachExtentByStart walks either).
  bool extents_in_file_order = true;
  std::vector<uint32_t, PageAllocator<uint32_t>> extents_by_start;

  // The first KV with exactly this key, or nullptr. Linear; for hot paths use
  // the index that the validator builds.
  const KeyValue* Find(std::string_view key) const;
};

}  // namespace ggufguard

#endif  // GGUFGUARD_FORMAT_HEADER_H_
