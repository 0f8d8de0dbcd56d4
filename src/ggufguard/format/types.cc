#include "ggufguard/format/ggml_type.h"
#include "ggufguard/format/value_type.h"

namespace ggufguard {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "u8";
    case ValueType::kInt8: return "i8";
    case ValueType::kUint16: return "u16";
    case ValueType::kInt16: return "i16";
    case ValueType::kUint32: return "u32";
    case ValueType::kInt32: return "i32";
    case ValueType::kFloat32: return "f32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kUint64: return "u64";
    case ValueType::kInt64: return "i64";
    case ValueType::kFloat64: return "f64";
  }
  return "unknown";
}

namespace {

constexpr GgmlTypeStatus V = GgmlTypeStatus::kValid;
constexpr GgmlTypeStatus I = GgmlTypeStatus::kIntermediate;
constexpr GgmlTypeStatus R = GgmlTypeStatus::kRemoved;

// Indexed by id. Sizes from ggml src/ggml-common.h @d99724f (GGUF-FACTS D.3).
constexpr GgmlTypeInfo kGgmlTypes[] = {
    {0, "F32", 1, 4, V, false},        {1, "F16", 1, 2, V, false},
    {2, "Q4_0", 32, 18, V, true},      {3, "Q4_1", 32, 20, V, true},
    {4, "Q4_2", 0, 0, R, true},        {5, "Q4_3", 0, 0, R, true},
    {6, "Q5_0", 32, 22, V, true},      {7, "Q5_1", 32, 24, V, true},
    {8, "Q8_0", 32, 34, V, true},      {9, "Q8_1", 32, 36, I, true},
    {10, "Q2_K", 256, 84, V, true},    {11, "Q3_K", 256, 110, V, true},
    {12, "Q4_K", 256, 144, V, true},   {13, "Q5_K", 256, 176, V, true},
    {14, "Q6_K", 256, 210, V, true},   {15, "Q8_K", 256, 292, I, true},
    {16, "IQ2_XXS", 256, 66, V, true}, {17, "IQ2_XS", 256, 74, V, true},
    {18, "IQ3_XXS", 256, 98, V, true}, {19, "IQ1_S", 256, 50, V, true},
    {20, "IQ4_NL", 32, 18, V, true},   {21, "IQ3_S", 256, 110, V, true},
    {22, "IQ2_S", 256, 82, V, true},   {23, "IQ4_XS", 256, 136, V, true},
    {24, "I8", 1, 1, V, false},        {25, "I16", 1, 2, V, false},
    {26, "I32", 1, 4, V, false},       {27, "I64", 1, 8, V, false},
    {28, "F64", 1, 8, V, false},       {29, "IQ1_M", 256, 56, V, true},
    {30, "BF16", 1, 2, V, false},      {31, "Q4_0_4_4", 0, 0, R, true},
    {32, "Q4_0_4_8", 0, 0, R, true},   {33, "Q4_0_8_8", 0, 0, R, true},
    {34, "TQ1_0", 256, 54, V, true},   {35, "TQ2_0", 256, 66, V, true},
    {36, "IQ4_NL_4_4", 0, 0, R, true}, {37, "IQ4_NL_4_8", 0, 0, R, true},
    {38, "IQ4_NL_8_8", 0, 0, R, true}, {39, "MXFP4", 32, 17, V, true},
    {40, "NVFP4", 64, 36, V, true},    {41, "Q1_0", 128, 18, V, true},
    {42, "Q2_0", 64, 18, V, true},
};

static_assert([] {
  for (uint32_t i = 0; i < sizeof(kGgmlTypes) / sizeof(kGgmlTypes[0]); ++i) {
    if (kGgmlTypes[i].id != i) return false;
    if ((kGgmlTypes[i].block_size == 0) != (kGgmlTypes[i].status == R)) return false;
  }
  return true;
}(), "kGgmlTypes must be indexed by id, and only removed ids have block size 0");

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  if (id >= sizeof(kGgmlTypes) / sizeof(kGgmlTypes[0])) return nullptr;
  return &kGgmlTypes[id];
}

absl::Span<const GgmlTypeInfo> AllGgmlTypes() { return kGgmlTypes; }

}  // namespace ggufguard
