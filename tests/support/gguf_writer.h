// A GGUF writer for tests, the corpus generator and benchmark inputs.
//
// It writes valid files and, on request, files that lie: every count, length,
// type id, n_dims, dim and offset can be overridden, and the lie is written as
// given, never recomputed. It is deliberately independent of src/: it has its
// own value-type enum and ggml type table, so a bug in the validator's tables
// cannot hide in a test that builds its input with the same tables.
//
// Anything the writer itself computes (sizes, offsets, padding) uses checked
// arithmetic and aborts on overflow or misuse: this is test code, and a wrong
// test input must fail loudly rather than produce a silently different file.
//
// Namespace note: inside `namespace ggufguard`, unqualified `testing::` names
// this namespace, not GoogleTest's; write `::testing::` for GoogleTest there.
// Likewise the project's `ggufguard::ValueType` is a different enum from
// `ggufguard::testing::ValueType` (same ids).
#ifndef GGUFGUARD_TESTS_SUPPORT_GGUF_WRITER_H_
#define GGUFGUARD_TESTS_SUPPORT_GGUF_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ggufguard/format/ggml_type.h"

namespace ggufguard::testing {

namespace gguf_writer_internal {
class Sink;  // where GgufBuilder streams a file: memory or a file descriptor
}  // namespace gguf_writer_internal

// GGUF metadata value type ids (spec table D.2).
enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// One metadata value, or an array element. A plain struct so that a test can
// build a value with a factory and then bend one field by hand.
//
// On disk a KV value is `type_id` followed by the payload; an array element is
// the payload alone (its type comes from the array). So a nested array element
// is written as elem_type, count, elements.
struct GgufValue {
  enum class Encoding : uint8_t {
    kScalar,  // `scalar_width` bytes of `scalar_bits`, in the file's byte order
    kString,  // length, then `str`
    kArray,   // `array_elem_type` (u32), count, then each element's payload
    kRaw,     // `raw` verbatim: no length, no byte swapping
  };

  uint32_t type_id = 0;  // written before the payload of a KV value
  Encoding encoding = Encoding::kScalar;
  uint64_t scalar_bits = 0;
  uint8_t scalar_width = 0;  // 1, 2, 4 or 8
  std::string str;           // arbitrary bytes: NUL and invalid UTF-8 allowed
  uint32_t array_elem_type = 0;
  std::vector<GgufValue> elems;
  // For kString the length written, for kArray the count written, instead of
  // the true one. Must fit in u32 in the v1 layout.
  std::optional<uint64_t> declared_length;
  std::vector<uint8_t> raw;

  static GgufValue U8(uint8_t v);
  static GgufValue I8(int8_t v);
  static GgufValue U16(uint16_t v);
  static GgufValue I16(int16_t v);
  static GgufValue U32(uint32_t v);
  static GgufValue I32(int32_t v);
  static GgufValue F32(float v);
  static GgufValue Bool(bool v);
  static GgufValue Str(std::string_view bytes);
  static GgufValue U64(uint64_t v);
  static GgufValue I64(int64_t v);
  static GgufValue F64(double v);
  // Aborts unless every element's type_id equals `elem` (catches test typos);
  // use ArrayWithElemType to write a mismatch on purpose.
  static GgufValue Array(ValueType elem, std::vector<GgufValue> elems);

  static GgufValue U8Array(std::vector<uint8_t> v);
  static GgufValue I8Array(std::vector<int8_t> v);
  static GgufValue U16Array(std::vector<uint16_t> v);
  static GgufValue I16Array(std::vector<int16_t> v);
  static GgufValue U32Array(std::vector<uint32_t> v);
  static GgufValue I32Array(std::vector<int32_t> v);
  static GgufValue U64Array(std::vector<uint64_t> v);
  static GgufValue I64Array(std::vector<int64_t> v);
  static GgufValue F32Array(std::vector<float> v);
  static GgufValue F64Array(std::vector<double> v);
  static GgufValue BoolArray(std::vector<bool> v);
  static GgufValue StrArray(std::vector<std::string> v);

  // --- Escape hatches for broken files. ---
  // `type_id` (any u32, e.g. 13) then `payload` verbatim. As an array element
  // only the payload is written.
  static GgufValue Raw(uint32_t type_id, std::vector<uint8_t> payload);
  // A BOOL whose byte is not necessarily 0 or 1.
  static GgufValue BoolByte(uint8_t byte);
  // A STRING whose length field says `declared_len` but whose bytes are `bytes`.
  static GgufValue StrWithLength(std::string bytes, uint64_t declared_len);
  // An ARRAY whose count field says `declared_count`; elements checked as in Array.
  static GgufValue ArrayWithCount(ValueType elem, std::vector<GgufValue> elems,
                                  uint64_t declared_count);
  // An ARRAY that declares `declared_elem_type` (any u32) but whose elements
  // are written by their own types, unchecked.
  static GgufValue ArrayWithElemType(uint32_t declared_elem_type, std::vector<GgufValue> elems);
};

// Block size (elements per block) and type size (bytes per block) of a ggml
// type id, from the validator's one type table (format/ggml_type.h). {0, 0}
// for removed ids (4, 5, 31-33, 36-38) and for ids it does not know
// (>= kFirstUnknownGgmlType).
struct GgmlTypeSize {
  uint32_t block_size;
  uint32_t type_size;
};
GgmlTypeSize GgmlTypeSizeOf(uint32_t ggml_type);

// (ne0 / block) * type_size * ne1 * ne2 * ..., dividing first as ggml should.
// An ne0 that is not a multiple of the block is rounded down. No dims means a
// scalar (one element). Returns 0 for a type with block size 0. Aborts on
// overflow: a test that wants dims whose size overflows must give the size.
uint64_t GgmlTensorBytes(uint32_t ggml_type, absl::Span<const uint64_t> dims);

// What a tensor's data bytes are.
enum class DataFill : uint8_t {
  kPattern,  // deterministic, every byte non-zero, different per tensor
  kZeros,    // all zero: what WriteToFile(..., sparse_data=true) turns into a hole
};

// Per-tensor overrides. Everything unset is computed from the tensor's
// dims and type. Kept at namespace scope so `= {}` works as a default argument;
// the explicit initializers let GCC 12 accept `{.fill = ...}` under -Wextra.
struct TensorOptions {
  // Value written in the info's offset field. Only the field lies: the data
  // is still laid out at the computed place (see BuiltFile).
  std::optional<uint64_t> offset = std::nullopt;
  // Bytes of data written (and reserved in the layout) for this tensor,
  // instead of the size computed from dims and type.
  std::optional<uint64_t> byte_size = std::nullopt;
  // n_dims field written instead of the number of dims written.
  std::optional<uint32_t> n_dims = std::nullopt;
  // Dims written in the info instead of `dims` (e.g. 0xFFFF...FF, which an
  // int64 reader sees as -1). The byte size is still computed from `dims`.
  std::optional<std::vector<uint64_t>> written_dims = std::nullopt;
  // Name length field written instead of the true length.
  std::optional<uint64_t> declared_name_length = std::nullopt;
  // Data bytes, as little-endian elements (swapped per element for
  // big-endian files when the type has block size 1). Sets the byte size
  // unless `byte_size` is given; then cut or zero-extended to it.
  std::optional<std::vector<uint8_t>> data = std::nullopt;
  // Overrides the builder's default fill when `data` is not given.
  std::optional<DataFill> fill = std::nullopt;
};

// Byte positions of everything a test may want to point a finding at.
// All offsets are absolute file offsets unless named "relative".
struct BuiltFile {
  std::vector<uint8_t> bytes;  // the file; empty from GgufBuilder::Layout()
  uint64_t file_size = 0;      // bytes.size() for Build()
  uint64_t header_end = 0;     // end of the last tensor info (before padding)
  uint64_t data_offset = 0;    // start of the data section
  std::vector<uint64_t> kv_offsets;        // each KV's key length field
  std::vector<uint64_t> kv_value_offsets;  // each KV's value type field
  std::vector<uint64_t> tensor_info_offsets;      // each info's name length field
  std::vector<uint64_t> tensor_relative_offsets;  // offset field values written
  std::vector<uint64_t> tensor_data_offsets;      // where each tensor's data really is
  std::vector<uint64_t> tensor_sizes;             // data bytes written per tensor
};

class GgufBuilder {
 public:
  GgufBuilder() = default;

  // Any u32. Version 1 selects the v1 layout (u32 counts, lengths and dims)
  // unless set_v1_layout says otherwise.
  GgufBuilder& set_version(uint32_t version);
  GgufBuilder& set_v1_layout(bool v1_layout);
  // Every multi-byte field and tensor data element is written big-endian;
  // the magic stays as set.
  GgufBuilder& set_big_endian(bool big_endian);
  // Four raw bytes written instead of "GGUF"; aborts unless size() == 4.
  GgufBuilder& set_magic(std::string_view four_bytes);
  // Counts written in the header instead of the true counts.
  GgufBuilder& set_tensor_count(uint64_t count);
  GgufBuilder& set_kv_count(uint64_t count);
  // Alignment used for the layout (default 32). Adds no KV. Must be non-zero;
  // need not be a power of two (padding uses o + (A - o % A) % A).
  GgufBuilder& set_alignment(uint64_t alignment);
  // Whether zero padding to the alignment follows the tensor infos. Default:
  // only when there is at least one tensor, as writers do (so an empty file
  // is exactly its 24-byte header).
  GgufBuilder& set_pad_header(bool pad);
  // Whether the data section ends with padding to the alignment (default true).
  GgufBuilder& set_pad_end(bool pad);
  // Stop right at the data section start (header padding included).
  GgufBuilder& set_omit_tensor_data(bool omit);
  // Cut the finished file (trailing bytes included) to `size` bytes; aborts
  // if the file is shorter. Applied after everything else.
  GgufBuilder& set_truncate_to(uint64_t size);
  // Bytes appended after the data section (after its end padding).
  GgufBuilder& set_trailing_bytes(std::vector<uint8_t> bytes);
  // Fill of tensors that have neither `data` nor `fill` (default kPattern).
  GgufBuilder& set_default_fill(DataFill fill);

  // `key` is arbitrary bytes.
  GgufBuilder& AddKv(std::string key, GgufValue value);
  // A key whose length field says `declared_key_length`.
  GgufBuilder& AddKvWithKeyLength(std::string key, uint64_t declared_key_length, GgufValue value);
  // Adds `general.alignment` as U32 and, if non-zero, uses it for the layout.
  GgufBuilder& AddAlignmentKv(uint32_t alignment);
  GgufBuilder& AddTensor(std::string name, std::vector<uint64_t> dims, uint32_t ggml_type,
                         TensorOptions options = {});

  // The whole file in memory.
  BuiltFile Build() const;
  // Build() without materializing the data: `bytes` is empty, every offset
  // and file_size are set. For files too big to hold in memory.
  BuiltFile Layout() const;
  // Streams the file to `path` (created or truncated). With `sparse_data`,
  // zero tensor data and zero padding are skipped with lseek and the size is
  // set with ftruncate, so an all-zero data section becomes a hole and a
  // multi-GiB benchmark file costs almost no disk or time.
  absl::Status WriteToFile(const std::string& path, bool sparse_data) const;

 private:
  struct Kv {
    std::string key;
    std::optional<uint64_t> declared_key_length;
    GgufValue value;
  };
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t ggml_type;
    TensorOptions options;
  };
  struct Plan;  // the laid-out file, shared by Build, Layout and WriteToFile

  Plan MakePlan() const;
  void Emit(const Plan& plan, gguf_writer_internal::Sink& sink) const;
  bool v1_layout() const { return v1_layout_.value_or(version_ == 1); }

  uint32_t version_ = 3;
  std::optional<bool> v1_layout_;
  bool big_endian_ = false;
  std::string magic_ = "GGUF";
  std::optional<uint64_t> tensor_count_;
  std::optional<uint64_t> kv_count_;
  uint64_t alignment_ = 32;
  std::optional<bool> pad_header_;
  bool pad_end_ = true;
  bool omit_tensor_data_ = false;
  std::optional<uint64_t> truncate_to_;
  std::vector<uint8_t> trailing_;
  DataFill default_fill_ = DataFill::kPattern;
  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

// Byte patches on a built file, for corruptions the builder has no knob for.
// Abort if the write would run past the end.
void PutU8(std::vector<uint8_t>& bytes, uint64_t offset, uint8_t v);
void PutU32LE(std::vector<uint8_t>& bytes, uint64_t offset, uint32_t v);
void PutU64LE(std::vector<uint8_t>& bytes, uint64_t offset, uint64_t v);
// Reads for assertions; abort if the read would run past the end.
uint32_t GetU32LE(absl::Span<const uint8_t> bytes, uint64_t offset);
uint64_t GetU64LE(absl::Span<const uint8_t> bytes, uint64_t offset);

}  // namespace ggufguard::testing

#endif  // GGUFGUARD_TESTS_SUPPORT_GGUF_WRITER_H_
