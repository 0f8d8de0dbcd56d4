// The ggml tensor types a GGUF file may name, with block and type sizes.
//
// This table changes upstream over time (ids 39-42 appeared in 2025-26), so it
// carries a version string that reports print, and a status per id so policy
// can decide what to accept.
#ifndef GGUFGUARD_FORMAT_GGML_TYPE_H_
#define GGUFGUARD_FORMAT_GGML_TYPE_H_

#include <cstdint>
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

// "ggml d99724f": the upstream commit the table was last checked against.
inline constexpr std::string_view kGgmlTypeTableVersion = "ggml d99724f (2026-07, 43 ids)";

// nullptr for an id outside the table (unknown to this version).
const GgmlTypeInfo* FindGgmlType(uint32_t id);
absl::Span<const GgmlTypeInfo> AllGgmlTypes();

}  // namespace ggufguard

#endif  // GGUFGUARD_FORMAT_GGML_TYPE_H_
