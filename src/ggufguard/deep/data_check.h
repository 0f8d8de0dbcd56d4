// The tensor data kernels of `--deep`: per ggml type, which values of the
// data must be finite, after the rules of ggml's ggml_validate_row_data
// (ggml/src/ggml-quants.c; the table per type is in docs/rules/GG6009.md).
//
// The unit of a check is what ggml's validator walks: an element for the
// float types, a block for the quantized ones. A kernel walks whole units
// of one tensor, counts the bad values and lists the first few; it reads
// nothing outside [p, p + n_units * unit_bytes). Each kernel has a scalar
// reference; the AVX2 paths are chosen at run time and must give the same
// answer (tests/deep_data_test.cc, fuzz/data_kernel_fuzzer.cc).
#ifndef GGUFGUARD_DEEP_DATA_CHECK_H_
#define GGUFGUARD_DEEP_DATA_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/io/byte_reader.h"

namespace ggufguard {

enum class DataCheckKind : uint8_t {
  kNothing,     // I8, I16, I32, I64, NVFP4 (every UE4M3 byte is a valid scale)
  kF32,         // every element
  kF64,
  kF16,
  kBF16,
  kBlockF16,    // one or two fp16 fields at fixed offsets in each block (d, m, dmin)
  kBlockF32,    // Q8_K: an f32 d at offset 0 of each block
  kBlockE8M0,   // MXFP4: the E8M0 exponent byte e; 0xff is NaN
  kIq1mScale,   // IQ1_M: an fp16 assembled from the top nibbles of four u16 scales
  kRefused,     // Q8_1: ggml's validator refuses the type outright
  kUnknown,     // an id outside the type table, or a removed id: never planned
};

struct DataCheck {
  DataCheckKind kind = DataCheckKind::kUnknown;
  uint32_t unit_bytes = 0;           // an element's or a block's bytes
  uint8_t n_fields = 0;              // kBlockF16: how many fields
  uint16_t field_offset[2] = {0, 0};  // within the block
  std::string_view field_name[2] = {"", ""};
};

// The check ggml's validator applies to a type id.
const DataCheck& DataCheckFor(uint32_t ggml_type);

enum class BadKind : uint8_t { kNan, kInfinity, kE8m0Nan };

struct BadValue {
  uint64_t unit = 0;        // element or block index in the tensor
  uint32_t byte_in_unit = 0;  // where the bad field starts in its unit
  uint8_t field = 0;        // index into DataCheck::field_name (blocks)
  BadKind kind = BadKind::kNan;
  uint64_t raw = 0;         // the field's bits, in the file's byte order decoded
};

// Checks `n_units` units at `p` (unit `first_unit` of its tensor first).
// Returns the number of bad values; appends the first of them to *listed
// until it holds `max_listed`. kNothing, kRefused and kUnknown check nothing.
uint64_t CheckDataUnits(const DataCheck& check, ByteOrder order, const uint8_t* p, uint64_t n_units,
                        uint64_t first_unit, size_t max_listed, std::vector<BadValue>* listed);

// The same answer from the scalar code alone, whatever the CPU: what the
// vector paths are compared against.
uint64_t CheckDataUnitsScalar(const DataCheck& check, ByteOrder order, const uint8_t* p, uint64_t n_units,
                              uint64_t first_unit, size_t max_listed, std::vector<BadValue>* listed);

// "NaN", "+inf", "-inf", or "E8M0 0xff (NaN)", with the raw bits in hex.
std::string DescribeBadValue(const DataCheck& check, const BadValue& bad);

}  // namespace ggufguard

#endif  // GGUFGUARD_DEEP_DATA_CHECK_H_
