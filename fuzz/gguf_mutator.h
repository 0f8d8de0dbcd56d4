// A structure-aware mutator for GGUF: it parses the input with ggufguard's
// own parser to find where every field is, then changes one field the way an
// attacker would (a count off by one, a length of 2^63, a type id swapped, a
// key duplicated, a string byte turned into invalid UTF-8) and writes it back
// in the file's byte order. Byte-level mutation rarely gets past a length
// field without breaking everything after it; this keeps the rest of the file
// intact, so the fuzzer spends its time in the rules instead of the
// truncation path.
//
// Linking gguf_mutator.cc into a libFuzzer binary defines
// LLVMFuzzerCustomMutator (falling back to LLVMFuzzerMutate for a share of
// the calls, and always when the input has no GGUF structure to work on).
// replay_main.cc's -mutate=N drives the same function without libFuzzer, so
// the mutator runs under gcc's ASan/UBSan in the developer build too.
#ifndef GGUFGUARD_FUZZ_GGUF_MUTATOR_H_
#define GGUFGUARD_FUZZ_GGUF_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "ggufguard/io/byte_reader.h"

namespace ggufguard::fuzz {

enum class FieldKind : uint8_t {
  kVersion,
  kCount,         // tensor_count, kv_count
  kLength,        // a key, string value or tensor name length
  kValueType,     // a KV's value type id
  kArrayType,     // an array's element type id
  kArrayCount,    // an array's element count
  kScalar,        // a scalar value or fixed-size array element
  kNDims,
  kDim,
  kGgmlType,
  kTensorOffset,  // a tensor's data offset, relative to the data section
  kAlignment,     // the value of a u32 general.alignment
};

struct Field {
  uint64_t offset;
  uint8_t width;  // 1, 2, 4 or 8
  FieldKind kind;
};

// The bytes of a key, string value, array string or tensor name, and the
// offset of the length field that counts them.
struct StringRegion {
  uint64_t begin;
  uint64_t end;
  uint64_t length_field;
};

// A whole KV or tensor info record: [begin, end).
struct Record {
  uint64_t begin;
  uint64_t end;
};

// A KV whose value is a scalar: the type field, then `width` payload bytes.
struct ScalarKv {
  uint64_t type_field;
  uint8_t width;
};

struct GgufLayout {
  bool gguf = false;    // magic and a known version were read
  bool parsed = false;  // the header parsed to the end of the tensor infos
  ByteOrder order = ByteOrder::kLittle;
  uint32_t version = 0;
  uint32_t length_size = 8;
  uint64_t tensor_count_field = 0;
  uint64_t kv_count_field = 0;
  uint64_t kvs_end = 0;     // end of the last KV that parsed
  uint64_t infos_end = 0;   // end of the last tensor info that parsed
  uint64_t alignment = 32;  // from a usable general.alignment, else 32
  uint64_t data_offset = 0; // infos_end rounded up (meaningful when parsed)
  std::vector<Field> fields;          // for targeted mutation (long arrays sampled)
  std::vector<StringRegion> strings;  // (long string arrays sampled)
  std::vector<Record> kvs;
  std::vector<Record> tensors;
  std::vector<ScalarKv> scalar_kvs;
  std::vector<uint64_t> tensor_offset_fields;
  // Every multi-byte field of the header, for a byte-order flip; set only
  // when the whole header parsed and holds no nested arrays.
  bool complete = false;
  std::vector<Field> all_fields;
};

// Maps the fields of `bytes` (as far as the header parses).
GgufLayout MapGguf(absl::Span<const uint8_t> bytes);

// One structure-aware mutation (sometimes two or three stacked) of
// data[0, size) in place; returns the new size (<= max_size), or 0 when the
// input has no GGUF structure to mutate. Deterministic in `seed`.
size_t MutateGguf(uint8_t* data, size_t size, size_t max_size, unsigned int seed);

}  // namespace ggufguard::fuzz

#endif  // GGUFGUARD_FUZZ_GGUF_MUTATOR_H_
