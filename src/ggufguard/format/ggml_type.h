// The ggml tensor types a GGUF file may name, with block and type sizes.
//
// This table changes upstream over time (ids 39-42 appeared in 2025-26), so it
// carries a version string that reports print, and a status per id so policy
// can decide what to accept.
#ifndef GGUFGUARD_FORMAT_GGML_TYPE_H_
#define GGUFGUARD_FORMAT_GGML_TYPE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace ggufguard {

enum class GgmlTypeStatus : uint8_t {
  kValid,         // written by today's converters
  kIntermediate,  // a compute-only type (Q8_1, Q8_K) that ggml still accepts
  kRemoved,       // an id that no longer names a storable type (block size 0)
};

struct GgmlTypeInfo {
  uint32_t id;
  std::string_view name;
  uint32_t block_size;  // elements per block; 0 for removed ids
  uint32_t type_size;   // bytes per block
  GgmlTypeStatus status;
  bool quantized;       // block_size > 1, or a quantized scalar type
};

// The one table of ggml types, indexed by id. Sizes from ggml
// src/ggml-common.h @d99724f (GGUF-FACTS D.3). The validator, the tests'
// GGUF writer and the fuzzers read it; a new id is one line here.
inline constexpr GgmlTypeStatus kValidType = GgmlTypeStatus::kValid;
inline constexpr GgmlTypeStatus kIntermediateType = GgmlTypeStatus::kIntermediate;
inline constexpr GgmlTypeStatus kRemovedType = GgmlTypeStatus::kRemoved;
inline constexpr GgmlTypeInfo kGgmlTypeTable[] = {
    {0, "F32", 1, 4, kValidType, false},
    {1, "F16", 1, 2, kValidType, false},
    {2, "Q4_0", 32, 18, kValidType, true},
    {3, "Q4_1", 32, 20, kValidType, true},
    {4, "Q4_2", 0, 0, kRemovedType, true},
    {5, "Q4_3", 0, 0, kRemovedType, true},
    {6, "Q5_0", 32, 22, kValidType, true},
    {7, "Q5_1", 32, 24, kValidType, true},
    {8, "Q8_0", 32, 34, kValidType, true},
    {9, "Q8_1", 32, 36, kIntermediateType, true},
    {10, "Q2_K", 256, 84, kValidType, true},
    {11, "Q3_K", 256, 110, kValidType, true},
    {12, "Q4_K", 256, 144, kValidType, true},
    {13, "Q5_K", 256, 176, kValidType, true},
    {14, "Q6_K", 256, 210, kValidType, true},
    {15, "Q8_K", 256, 292, kIntermediateType, true},
    {16, "IQ2_XXS", 256, 66, kValidType, true},
    {17, "IQ2_XS", 256, 74, kValidType, true},
    {18, "IQ3_XXS", 256, 98, kValidType, true},
    {19, "IQ1_S", 256, 50, kValidType, true},
    {20, "IQ4_NL", 32, 18, kValidType, true},
    {21, "IQ3_S", 256, 110, kValidType, true},
    {22, "IQ2_S", 256, 82, kValidType, true},
    {23, "IQ4_XS", 256, 136, kValidType, true},
    {24, "I8", 1, 1, kValidType, false},
    {25, "I16", 1, 2, kValidType, false},
    {26, "I32", 1, 4, kValidType, false},
    {27, "I64", 1, 8, kValidType, false},
    {28, "F64", 1, 8, kValidType, false},
    {29, "IQ1_M", 256, 56, kValidType, true},
    {30, "BF16", 1, 2, kValidType, false},
    {31, "Q4_0_4_4", 0, 0, kRemovedType, true},
    {32, "Q4_0_4_8", 0, 0, kRemovedType, true},
    {33, "Q4_0_8_8", 0, 0, kRemovedType, true},
    {34, "TQ1_0", 256, 54, kValidType, true},
    {35, "TQ2_0", 256, 66, kValidType, true},
    {36, "IQ4_NL_4_4", 0, 0, kRemovedType, true},
    {37, "IQ4_NL_4_8", 0, 0, kRemovedType, true},
    {38, "IQ4_NL_8_8", 0, 0, kRemovedType, true},
    {39, "MXFP4", 32, 17, kValidType, true},
    {40, "NVFP4", 64, 36, kValidType, true},
    {41, "Q1_0", 128, 18, kValidType, true},
    {42, "Q2_0", 64, 18, kValidType, true},
};

static_assert([] {
  for (uint32_t i = 0; i < sizeof(kGgmlTypeTable) / sizeof(kGgmlTypeTable[0]); ++i) {
    if (kGgmlTypeTable[i].id != i) return false;
    if ((kGgmlTypeTable[i].block_size == 0) != (kGgmlTypeTable[i].status == kRemovedType)) return false;
  }
  return true;
}(), "kGgmlTypeTable must be indexed by id, and only removed ids have block size 0");

// The first id this version does not know: tests and fuzzers that want an
// unknown type use it, so a new id never turns one of them into a known one.
inline constexpr uint32_t kFirstUnknownGgmlType = sizeof(kGgmlTypeTable) / sizeof(kGgmlTypeTable[0]);

// "ggml d99724f": the upstream commit the table was last checked against;
// reports print it with the number of ids (GgmlTypeTableVersion).
inline constexpr std::string_view kGgmlTypeTableCommit = "ggml d99724f (2026-07)";
// "ggml d99724f (2026-07), 43 ids".
std::string GgmlTypeTableVersion();

// A type id that a fork of ggml writes into its own GGUF files, with no
// meaning (or another one) upstream: what GG5007 and GG5008 say of an id
// this table does not know. Read from each fork's ggml/include/ggml.h at the
// commit named; an id no fork here uses has no entry. Never a size: a file
// with such an id is judged unreadable, as upstream ggml refuses it.
struct ForkGgmlType {
  uint32_t id;
  std::string_view fork;  // "TurboQuant (TheTom/llama-cpp-turboquant @00910b10)"
  std::string_view name;  // the fork's name for it, "TQ3_1S"
};
// The fork that writes `id`, or nullptr. Ids are unique across the table
// (a static_assert in types.cc checks it); where two forks use one id, the
// table names the first it lists.
const ForkGgmlType* FindForkGgmlType(uint32_t id);

// nullptr for an id outside the table (unknown to this version).
inline const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  return id < kFirstUnknownGgmlType ? &kGgmlTypeTable[id] : nullptr;
}
inline absl::Span<const GgmlTypeInfo> AllGgmlTypes() { return kGgmlTypeTable; }

}  // namespace ggufguard

#endif  // GGUFGUARD_FORMAT_GGML_TYPE_H_
